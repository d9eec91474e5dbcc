"""Child process for the runtime memory benchmark: one trainer, one optimizer step, its peak RSS as one JSON line.

    python -m benchmarks.memory_child prepare WORKDIR
    python -m benchmarks.memory_child ours|trl WORKDIR --length N

`prepare` writes the tiny model with a Qwen-sized vocabulary (VOCAB tokens, so the LM head dominates memory as in
real models) and the demo prompts, so both trainers load the very same files. Both get the same settings, seed
and one torch thread; `min_new_tokens` equal to max_completion_length makes every completion exactly N tokens on
both sides whatever they sample (the same stub as benchmarks/runtime_child.py uses for throughput).
Peak RSS is the process's ru_maxrss at the end (imports, load, generation, scoring, loss, backward, optimizer
step); `baseline` is the RSS after the imports and before the trainer is built.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
from pathlib import Path

VOCAB = 151_936  # Qwen2/2.5's vocabulary
# One prompt x 4 completions per optimizer step, one micro-batch of 4 rows (4 x N tokens), the per-micro-batch
# shape of the 4 x 512 / 4 x 1024 measurements; at N = 2048 TRL's peak stays far under 24 GiB. More rows
# per step would only repeat micro-batches (and cost minutes of CPU per length on the shared machine).
SETTINGS = dict(
    per_device_train_batch_size=4,
    num_generations=4,
    gradient_accumulation_steps=1,
    temperature=1.0,
    loss_type="dapo",
    beta=0.0,
    learning_rate=0.01,
    lr_scheduler_type="constant",
    optim="adamw_torch",
    seed=0,
    logging_steps=1,
    report_to="none",
    save_strategy="no",
    bf16=False,
    disable_tqdm=True,
    max_steps=1,
    gradient_checkpointing=False,
    use_cpu=True,
)
REWARD = "grpo_runtime.data.reward_library.target_word_reward"


def settings_for(length: int, output_dir: Path) -> dict:
    return {
        **SETTINGS,
        "max_completion_length": length,
        "generation_kwargs": {"min_new_tokens": length},
        "output_dir": str(output_dir),
    }


def prepare(workdir: Path) -> dict:
    from grpo_runtime.launch.demo import demo_rows
    from grpo_runtime.model.tiny import save_tiny_model

    save_tiny_model(workdir / "model", vocab_size=VOCAB, max_positions=4096)
    with (workdir / "train.jsonl").open("w", encoding="utf-8") as handle:
        for row in demo_rows(repeats=2):
            handle.write(json.dumps(row) + "\n")
    return {"model": str(workdir / "model"), "data": str(workdir / "train.jsonl")}


def run_ours(workdir: Path, length: int) -> None:
    import yaml

    import grpo_runtime.train as train
    from grpo_schema import check_text

    settings = settings_for(length, workdir / f"out-ours-{length}")
    settings.update(
        model_name_or_path=str(workdir / "model"), dataset_name=str(workdir / "train.jsonl"), reward_funcs=[REWARD]
    )
    result = check_text(yaml.safe_dump(settings))
    if not result.valid:
        raise SystemExit(f"benchmark config invalid: {[d.to_dict() for d in result.diagnostics]}")
    train.main(result.config, result.plan)


def run_trl(workdir: Path, length: int) -> None:
    from datasets import load_dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from grpo_runtime.data.reward_library import target_word_reward

    trainer = GRPOTrainer(
        model=str(workdir / "model"),
        reward_funcs=[target_word_reward],
        args=GRPOConfig(**settings_for(length, workdir / f"out-trl-{length}")),
        train_dataset=load_dataset("json", data_files=str(workdir / "train.jsonl"), split="train"),
        processing_class=AutoTokenizer.from_pretrained(workdir / "model"),
    )
    trainer.train()


def rss_bytes() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("side", choices=("prepare", "ours", "trl"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--length", type=int, default=512)
    args = parser.parse_args()
    if args.side == "prepare":
        print(json.dumps(prepare(args.workdir)))
        return
    import torch
    import transformers  # noqa: F401  (imported by both sides: counted in the baseline)

    torch.set_num_threads(1)
    baseline = rss_bytes()
    (run_ours if args.side == "ours" else run_trl)(args.workdir, args.length)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"peak_rss_bytes": peak, "baseline_rss_bytes": baseline, "length": args.length}))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
