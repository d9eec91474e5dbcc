"""The small-run config: the demo task (say the target word) on the tiny model, sized for a CPU test."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

TARGET_REWARD = "grpo_runtime.data.reward_library.target_word_reward"


@dataclass(frozen=True)
class Assets:
    model: Path
    data: Path


def write_assets(root: Path, model: Path) -> Assets:
    """The demo prompts written under `root`/data beside the (shared) tiny model."""
    from grpo_runtime.launch.demo import demo_rows

    (root / "data").mkdir(parents=True, exist_ok=True)
    with (root / "data" / "train.jsonl").open("w") as handle:
        for row in demo_rows():
            handle.write(json.dumps(row) + "\n")
    return Assets(Path(model), root / "data")


def run_yaml(assets: Assets, **overrides) -> str:
    """A config for the demo task sized for a test: a handful of fast steps, a checkpoint every 2."""
    config = dict(
        model_name_or_path=str(assets.model),
        dataset_name=str(assets.data),
        reward_funcs=[TARGET_REWARD],
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=4,
        loss_type="dapo",
        beta=0.0,
        learning_rate=0.01,
        optim="adamw_torch",
        max_steps=6,
        save_steps=2,
        logging_steps=1,
        seed=0,
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        report_to="none",
    )
    config.update(overrides)
    return yaml.safe_dump({k: v for k, v in config.items() if v is not None}, sort_keys=False)
