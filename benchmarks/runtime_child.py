"""Child process for the runtime benchmark: one trainer, one run, one JSON line.

    python -m benchmarks.runtime_child prepare WORKDIR
    python -m benchmarks.runtime_child ours|trl WORKDIR --device cpu|cuda --steps N [--profile FILE]

`prepare` writes the tiny model (grpo_runtime.model.tiny) and the demo prompts once, so both trainers load the very same
files. Both trainers get the same settings (SETTINGS), seed and thread count (--threads, default THREADS);
`min_new_tokens` equal to max_completion_length makes every completion full length, so both do the same token
work whatever they sample.
Step times are the intervals between consecutive optimizer-step completions (wall and process CPU time), so
they cover the whole loop (generation, rewards, loss, backward, optimizer step, logging) on both sides: TRL's
on_step_end callback, and a wrapper around grpo_runtime.train.optimizer_step.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

SETTINGS = dict(
    per_device_train_batch_size=32,
    num_generations=8,
    gradient_accumulation_steps=1,
    max_completion_length=16,
    generation_kwargs={"min_new_tokens": 16},
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
)
REWARD = "grpo_runtime.data.reward_library.target_word_reward"
# One intra-op thread: at this model size two threads gain nothing, and on a shared 2-core machine a second
# OpenMP thread that is descheduled stalls every matmul (measured: mean linear time 8x worse under load).
THREADS = 1


def prepare(workdir: Path) -> dict:
    from grpo_runtime.launch.demo import demo_rows
    from grpo_runtime.model.tiny import save_tiny_model

    save_tiny_model(workdir / "model")
    with (workdir / "train.jsonl").open("w", encoding="utf-8") as handle:
        for row in demo_rows(repeats=8):
            handle.write(json.dumps(row) + "\n")
    return {"model": str(workdir / "model"), "data": str(workdir / "train.jsonl")}


def settings_for(device: str, steps: int, output_dir: Path) -> dict:
    return {
        **SETTINGS,
        "max_steps": steps,
        "use_cpu": device == "cpu",
        "output_dir": str(output_dir),
        "gradient_checkpointing": False,
    }


class StepClock:
    """Wall and CPU time at each optimizer-step completion."""

    def __init__(self):
        self.marks: list[tuple[float, float]] = []

    def mark(self) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.marks.append((time.perf_counter(), usage.ru_utime + usage.ru_stime))

    def intervals(self) -> tuple[list[float], list[float]]:
        pairs = list(zip(self.marks, self.marks[1:]))
        return [b[0] - a[0] for a, b in pairs], [b[1] - a[1] for a, b in pairs]


def run_ours(workdir: Path, device: str, steps: int, clock: StepClock) -> list[dict]:
    import yaml

    import grpo_runtime.train as train
    from grpo_schema import check_text

    settings = settings_for(device, steps, workdir / "out-ours")
    settings.update(
        model_name_or_path=str(workdir / "model"), dataset_name=str(workdir / "train.jsonl"), reward_funcs=[REWARD]
    )
    result = check_text(yaml.safe_dump(settings))
    if not result.valid:
        raise SystemExit(f"benchmark config invalid: {[d.to_dict() for d in result.diagnostics]}")
    step = train.optimizer_step

    def timed_step(*args, **kwargs):
        out = step(*args, **kwargs)
        clock.mark()
        return out

    train.optimizer_step = timed_step
    train.main(result.config, result.plan)
    lines = (workdir / "out-ours" / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def run_trl(workdir: Path, device: str, steps: int, clock: StepClock) -> list[dict]:
    from datasets import load_dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_runtime.data.reward_library import target_word_reward

    class MarkSteps(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            clock.mark()

    trainer = GRPOTrainer(
        model=str(workdir / "model"),
        reward_funcs=[target_word_reward],
        args=GRPOConfig(**settings_for(device, steps, workdir / "out-trl")),
        train_dataset=load_dataset("json", data_files=str(workdir / "train.jsonl"), split="train"),
        processing_class=AutoTokenizer.from_pretrained(workdir / "model"),
        callbacks=[MarkSteps()],
    )
    trainer.train()
    return [h for h in trainer.state.log_history if "loss" in h]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("side", choices=("prepare", "ours", "trl"))
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=THREADS, help="torch intra-op threads (both trainers)")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the run here")
    args = parser.parse_args()
    if args.side == "prepare":
        print(json.dumps(prepare(args.workdir)))
        return
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps({"skipped": "no CUDA device on this machine"}))
        return
    torch.set_num_threads(args.threads)
    run = run_ours if args.side == "ours" else run_trl
    clock = StepClock()
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        records = profiler.runcall(run, args.workdir, args.device, args.steps, clock)
        profiler.dump_stats(str(args.profile))
    else:
        records = run(args.workdir, args.device, args.steps, clock)
    wall, cpu = clock.intervals()
    lengths = [r.get("completions/mean_length") for r in records]
    print(
        json.dumps(
            {
                "step_wall_s": wall,
                "step_cpu_s": cpu,
                "mean_completion_length": lengths,
                "threads": torch.get_num_threads(),
                "device": args.device,
            }
        )
    )


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
