"""Child process for the runtime benchmark: one trainer, one run, one JSON line.

    python -m benchmarks.runtime_child prepare WORKDIR
    python -m benchmarks.runtime_child ours|trl WORKDIR --device cpu|cuda --steps N [--profile FILE]

`prepare` writes the tiny model (grpo_runtime.tiny) and the demo prompts once, so both trainers load the very same
files. Both trainers get the same settings (SETTINGS), seed and thread count; `min_new_tokens` equal to
max_completion_length makes every completion full length, so both do the same token work whatever they sample.
Step times come from each trainer's own step boundary: TRL's on_step_begin/on_step_end callbacks (generation,
loss, backward and the optimizer step) and grpo_runtime's `step_time` metric (the same span).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

SETTINGS = dict(
    per_device_train_batch_size=32, num_generations=8, gradient_accumulation_steps=1, max_completion_length=16,
    generation_kwargs={"min_new_tokens": 16}, temperature=1.0, loss_type="dapo", beta=0.0, learning_rate=0.01,
    lr_scheduler_type="constant", optim="adamw_torch", seed=0, logging_steps=1, report_to="none",
    save_strategy="no", bf16=False, disable_tqdm=True,
)
REWARD = "grpo_runtime.reward_library.target_word_reward"
THREADS = 2


def prepare(workdir: Path) -> dict:
    from grpo_runtime.demo import demo_rows
    from grpo_runtime.tiny import save_tiny_model

    save_tiny_model(workdir / "model")
    with (workdir / "train.jsonl").open("w", encoding="utf-8") as handle:
        for row in demo_rows(repeats=8):
            handle.write(json.dumps(row) + "\n")
    return {"model": str(workdir / "model"), "data": str(workdir / "train.jsonl")}


def settings_for(device: str, steps: int, output_dir: Path) -> dict:
    return {**SETTINGS, "max_steps": steps, "use_cpu": device == "cpu", "output_dir": str(output_dir),
            "gradient_checkpointing": False}


def run_ours(workdir: Path, device: str, steps: int) -> tuple[list[float], float, list[dict]]:
    import yaml

    from grpo_runtime.train import main
    from grpo_schema import check_text

    settings = settings_for(device, steps, workdir / "out-ours")
    settings.update(model_name_or_path=str(workdir / "model"), dataset_name=str(workdir / "train.jsonl"),
                    reward_funcs=[REWARD])
    result = check_text(yaml.safe_dump(settings))
    if not result.valid:
        raise SystemExit(f"benchmark config invalid: {[d.to_dict() for d in result.diagnostics]}")
    started = time.perf_counter()
    main(result.config, result.plan)
    total = time.perf_counter() - started
    lines = (workdir / "out-ours" / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return [r["step_time"] for r in records], total, records


def run_trl(workdir: Path, device: str, steps: int) -> tuple[list[float], float, list[dict]]:
    from datasets import load_dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_runtime.reward_library import target_word_reward

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times, self.started = [], 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.times.append(time.perf_counter() - self.started)

    timer = StepTimer()
    started = time.perf_counter()
    trainer = GRPOTrainer(
        model=str(workdir / "model"), reward_funcs=[target_word_reward],
        args=GRPOConfig(**settings_for(device, steps, workdir / "out-trl")),
        train_dataset=load_dataset("json", data_files=str(workdir / "train.jsonl"), split="train"),
        processing_class=AutoTokenizer.from_pretrained(workdir / "model"), callbacks=[timer],
    )
    trainer.train()
    total = time.perf_counter() - started
    return timer.times, total, [h for h in trainer.state.log_history if "loss" in h]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("side", choices=("prepare", "ours", "trl"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--profile", type=Path, help="write a cProfile of the run here")
    args = parser.parse_args()
    if args.side == "prepare":
        print(json.dumps(prepare(args.workdir)))
        return
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps({"skipped": "no CUDA device on this machine"}))
        return
    torch.set_num_threads(THREADS)
    run = run_ours if args.side == "ours" else run_trl
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        step_times, total, records = profiler.runcall(run, args.workdir, args.device, args.steps)
        profiler.dump_stats(str(args.profile))
    else:
        step_times, total, records = run(args.workdir, args.device, args.steps)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    lengths = [r.get("completions/mean_length") for r in records]
    print(json.dumps({"step_times": step_times, "total_s": total, "cpu_s": cpu, "mean_completion_length": lengths,
                      "threads": torch.get_num_threads(), "device": args.device}))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
