"""One part of the GPU check, in its own process: `runtime CONFIG` (grpo_runtime) or `trl CONFIG` (GRPOTrainer).

Prints one line `GPU_CHECK {json}`: s/step (median of the logged step times after 2 warm-up steps),
completions/s, peak GPU memory (torch's peak reserved bytes in this process: the training state and the
colocated vLLM engine's pool), and the importance-sampling ratio of each step.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def measurements(steps: list[dict], completions_per_step: int) -> dict:
    import torch

    times = [row["step_time"] for row in steps if row.get("step_time") is not None][2:]
    per_step = statistics.median(times) if times else None
    return {
        "s_per_step": per_step,
        "completions_per_s": completions_per_step / per_step if per_step else None,
        "peak_gpu_memory_gib": torch.cuda.max_memory_reserved() / 2**30 if torch.cuda.is_available() else None,
        "importance_sampling_ratio_mean": [row.get("sampling/importance_sampling_ratio/mean") for row in steps],
        "reward": [row.get("reward") for row in steps],
    }


def run_runtime(path: str) -> dict:
    from grpo_runtime.train import main
    from grpo_schema import check_file

    checked = check_file(path)
    assert checked.valid, [d.to_dict() for d in checked.diagnostics]
    main(checked.config, checked.plan)
    output = Path(checked.config.output_dir)
    steps = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    return measurements(steps, checked.plan.completions_per_optimizer_step)


def run_trl(path: str) -> dict:
    import yaml
    from datasets import load_dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from grpo_runtime.data.reward_library import target_word_reward

    values = yaml.safe_load(Path(path).read_text())
    model, data = values.pop("model_name_or_path"), values.pop("dataset_name")
    values.pop("reward_funcs")
    steps: list[dict] = []

    class Record(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                steps.append(dict(logs))

    args = GRPOConfig(**values)
    dataset = load_dataset("json", data_files=str(Path(data) / "train.jsonl"), split="train")
    trainer = GRPOTrainer(
        model=model, reward_funcs=target_word_reward, args=args, train_dataset=dataset, callbacks=[Record()]
    )
    trainer.train()
    per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps * trainer.accelerator.num_processes
    return measurements(steps, per_step)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    mode, config = sys.argv[1], sys.argv[2]
    result = run_runtime(config) if mode == "runtime" else run_trl(config)
    print("GPU_CHECK " + json.dumps(result), flush=True)
