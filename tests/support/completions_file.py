"""A hand-written completions.jsonl the runs page is checked against: rewards, truncation and ranks known row by
row, more rows than one request serves, and lines the reader must skip."""

from __future__ import annotations

import json
from pathlib import Path

# Controlled completions for one step: two prompts of four completions, two reward functions, some rows
# truncated. By total reward the best of the groups are rows 2 and 6 and the worst 3 and 5; by fa alone 0 and 6,
# and 1 and 5.
STEP0 = [  # (fa, fb, truncated)
    (1.0, 0.0, False),
    (0.0, 0.5, True),
    (0.2, 1.5, False),
    (0.1, 0.0, True),
    (0.5, 0.5, False),
    (0.0, 0.0, False),
    (1.0, 1.0, True),
    (0.3, 0.0, False),
]
STEP1_ROWS = 450  # more than one request serves (200)


def controlled_completions(path: Path) -> None:
    """A hand-written completions.jsonl: step 0 as above, step 1 with 450 rows, two unreadable lines."""
    with path.open("w") as handle:
        for i, (fa, fb, truncated) in enumerate(STEP0):
            handle.write(
                json.dumps(
                    {
                        "step": 0,
                        "prompt": f"prompt {'AB'[i // 4]}",
                        "completion": f"answer {i}",
                        "rewards": {"fa": fa, "fb": fb},
                        "reward": fa + fb,
                        "advantage": fa + fb - 1,
                        "length": 3 + i,
                        "truncated": truncated,
                    }
                )
                + "\n"
            )
        handle.write("{this line is damaged\n")
        for i in range(STEP1_ROWS):
            handle.write(
                json.dumps(
                    {
                        "step": 1,
                        "prompt": f"prompt {i // 10}",
                        "completion": f"row {i}",
                        "rewards": {"fa": i / STEP1_ROWS, "fb": 0.0},
                        "reward": i / STEP1_ROWS,
                        "advantage": 0.0,
                        "length": 2,
                        "truncated": False,
                    }
                )
                + "\n"
            )
        handle.write('{"step": 1, "prompt": "cut sh')  # a last line cut short
