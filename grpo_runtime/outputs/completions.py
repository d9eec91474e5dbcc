"""completions.jsonl and completions-sample.jsonl: the prompts and completions of each generation batch.

With `log_completions: true` every row of every generation batch, gathered from all processes, goes to
OUTPUT_DIR/completions.jsonl (TRL shows the same table in the console or wandb). Without it the main process
still keeps a small sample in OUTPUT_DIR/completions-sample.jsonl: its first SAMPLE_GROUPS prompt groups of the
generation batches that start a logged step (logging_steps), so a run can always be looked at. One JSON object a
line:

    {"step": 3, "prompt": ..., "completion": ..., "rewards": {"reward_fn": 1.0, ...}, "reward": 1.0,
     "advantage": 0.5, "length": 4, "truncated": false}

`step` is the optimizer step the batch was generated before (the global step so far), `rewards` each reward
function's raw score (null when it returned None), `reward` their weighted sum (None scores left out),
`advantage` the row's advantage, `length` its completion tokens and `truncated` whether it ended without an
end-of-sequence token (hit max_completion_length). Pure Python and tensors: no torch import of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

COMPLETIONS_FILE = "completions.jsonl"
SAMPLE_FILE = "completions-sample.jsonl"
SAMPLE_GROUPS = 2  # prompt groups per sampled step when log_completions is off


def completion_rows(
    step: int,
    names: list[str],
    weights: list[float],
    prompts: list,
    completions: list,
    rewards: list[list],
    advantages: list[float],
    lengths: list[int],
    truncated: list[bool],
) -> list[dict]:
    rows = []
    for prompt, completion, scores, advantage, length, cut in zip(
        prompts, completions, rewards, advantages, lengths, truncated
    ):
        total = sum(w * v for w, v in zip(weights, scores) if v is not None)
        rows.append(
            {
                "step": step,
                "prompt": prompt,
                "completion": completion,
                "rewards": dict(zip(names, scores)),
                "reward": total,
                "advantage": advantage,
                "length": int(length),
                "truncated": bool(cut),
            }
        )
    return rows


def rows_lengths(completion_ids, completion_mask, stop_ids, max_length: int) -> tuple[list[int], list[bool]]:
    """Each row's completion tokens and whether it was truncated, from the padded batch: the mask counts the
    tokens (a truncated row's mask is all 0 when mask_truncated_completions is on: it had max_length tokens)."""
    lengths, truncated = [], []
    for ids, mask in zip(completion_ids.tolist(), completion_mask.tolist()):
        length = int(sum(mask))
        if length == 0:
            lengths.append(max_length)
            truncated.append(True)
        else:
            lengths.append(length)
            truncated.append(ids[length - 1] not in stop_ids)
    return lengths, truncated


def append_rows(output_dir: Path, rows: list[dict], sample: bool = False) -> None:
    path = Path(output_dir) / (SAMPLE_FILE if sample else COMPLETIONS_FILE)
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
