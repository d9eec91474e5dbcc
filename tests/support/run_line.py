"""A run's line seeded on disk and in the runs database as a service leaves it: a run cancelled at step 1482
(checkpoints every 500 steps), resumed from checkpoint-1000 by a run that trained to step 5000 in the same
output_dir."""

from __future__ import annotations

import json
from pathlib import Path

from grpo_web.runs.store import Store

PARENT, CHILD, GRANDCHILD = "0000000000a1", "0000000000b2", "0000000000c3"


def seed_line(runs_dir: Path, link: bool = True, store: Store | None = None) -> tuple[Store, Path]:
    """The parent (cancelled at 1482) and its successor (succeeded at 5000) in one output_dir."""
    output = runs_dir / "line-output"
    for step in (500, 1000, *range(1500, 5001, 500)):
        (output / f"checkpoint-{step}").mkdir(parents=True)
        (output / f"checkpoint-{step}" / "runtime_state.json").write_text("{}")
    rows = [
        (1482, "trained by the parent"),
        (1483, "generated as the parent was cancelled, never trained"),
        (1001, "the successor's first step"),
        (5000, "the successor's last step"),
    ]
    (output / "completions.jsonl").write_text(
        "".join(
            json.dumps({"step": step, "prompt": "p", "completion": text, "reward": 1.0}) + "\n" for step, text in rows
        )
    )
    parents_end = len(
        "".join(
            json.dumps({"step": step, "prompt": "p", "completion": text, "reward": 1.0}) + "\n"
            for step, text in rows[:2]
        )
    )  # where the successor began appending
    store = store or Store(runs_dir / "runs.sqlite3")
    config = "max_steps: 5000\nsave_steps: 500\n"
    common = dict(config_text=config, config_format="yaml", world_size=1, output_dir=str(output))
    store.insert(
        id=PARENT,
        state="cancelled",
        run_dir=str(runs_dir / PARENT),
        **common,
        **({"resumed_by": CHILD, "completions_end": parents_end} if link else {}),
    )
    store.add_metrics(PARENT, [{"step": 1, "reward": 0.1}, {"step": 1482, "reward": 0.5}], 0, None)
    store.insert(
        id=CHILD,
        state="succeeded",
        run_dir=str(runs_dir / CHILD),
        resumed_from=PARENT,
        resume_checkpoint=str(output / "checkpoint-1000"),
        **common,
    )
    store.add_metrics(CHILD, [{"step": 1000, "reward": 0.4}, {"step": 5000, "reward": 0.9}], 0, None)
    return store, output
