"""Write the trainer states the run-health tests read (python tests/health/data/make_states.py).

Each is a TRL trainer_state.json as the trainer writes it (global_step, max_steps, logging_steps, log_history with
the end-of-training summary last), with the metric names of its TRL era and numbers shaped like those of public
GRPO runs: a 0.16-era run with two dead reward functions, 1.x runs with an fp16 overflow skip, a logging_steps-10
run whose one-step grad norm reads 0, completions cut at a 128-token cap while a format reward saturates, zero-std
groups and KL over most of a run, an SFT run, and a run with one logged step.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def state(records: list[dict], logging_steps: int, max_steps: int | None = None) -> dict:
    last = records[-1]["step"] if records else 0
    summary = {
        "step": last,
        "epoch": records[-1].get("epoch", 1.0) if records else 0.0,
        "train_runtime": 3600.0,
        "train_samples_per_second": 1.2,
        "train_steps_per_second": 0.05,
        "total_flos": 0.0,
        "train_loss": 0.01,
    }
    return {
        "best_metric": None,
        "epoch": summary["epoch"],
        "eval_steps": 500,
        "global_step": last,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "logging_steps": logging_steps,
        "max_steps": max_steps or last,
        "num_train_epochs": 1,
        "save_steps": 500,
        "train_batch_size": 8,
        "log_history": records + ([summary] if records else []),
    }


def r(x: float) -> float:
    return round(x, 6)


def modern(step: int, rng: random.Random, total: int, **over) -> dict:
    """A 1.x-era record of a run that learns: reward up, entropy down, KL small."""
    t = step / total
    acc = min(0.1 + 0.5 * t + rng.gauss(0, 0.04), 1.0)
    record = {
        "loss": r(0.01 + rng.gauss(0, 0.005)),
        "grad_norm": r(0.3 + abs(rng.gauss(0, 0.1))),
        "learning_rate": 1e-6,
        "num_tokens": 4096.0 * step,
        "completions/mean_length": r(180 + rng.gauss(0, 20)),
        "completions/min_length": 40.0,
        "completions/max_length": 512.0,
        "completions/clipped_ratio": r(max(0.0, 0.05 + rng.gauss(0, 0.02))),
        "completions/mean_terminated_length": r(170 + rng.gauss(0, 20)),
        "completions/min_terminated_length": 40.0,
        "completions/max_terminated_length": 500.0,
        "rewards/accuracy_reward/mean": r(acc),
        "rewards/accuracy_reward/std": r(0.35 + rng.gauss(0, 0.03)),
        "reward": r(acc),
        "reward_std": r(0.35 + rng.gauss(0, 0.03)),
        "frac_reward_zero_std": r(min(max(0.3 + rng.gauss(0, 0.08), 0.0), 0.8)),
        "entropy": r(1.5 - 0.5 * t + rng.gauss(0, 0.02)),
        "kl": r(0.002 + 0.01 * t),
        "clip_ratio/low_mean": 0.0,
        "clip_ratio/high_mean": 0.0,
        "clip_ratio/region_mean": 0.0,
        "clip_ratio/low_min": 0.0,
        "clip_ratio/high_max": 0.0,
        "step_time": r(30 + rng.gauss(0, 2)),
        "epoch": r(step / total),
        "step": step,
    }
    record.update(over)
    return record


def trl_016_dead_rewards() -> dict:
    """TRL 0.16 names (rewards/NAME, completion_length, clip_ratio, no std per function): accuracy_reward varies,
    format_reward is 0.0 and soft_format_penalty -1.0 on every one of 250 logged steps."""
    rng = random.Random(16)
    records = []
    for step in range(1, 251):
        acc = r(min(0.05 + 0.3 * step / 250 + rng.gauss(0, 0.05), 1.0))
        records.append(
            {
                "loss": r(0.0005 * step / 250 + abs(rng.gauss(0, 0.0002))),
                "grad_norm": r(0.2 + abs(rng.gauss(0, 0.08))),
                "learning_rate": 3e-6,
                "completion_length": r(220 + rng.gauss(0, 25)),
                "rewards/accuracy_reward": acc,
                "rewards/format_reward": 0.0,
                "rewards/soft_format_penalty": -1.0,
                "reward": r(acc - 1.0),
                "reward_std": r(0.3 + rng.gauss(0, 0.03)),
                "kl": r(0.0004 * step / 25),
                "clip_ratio": 0.0,
                "num_tokens": 2048.0 * step,
                "epoch": r(step / 250),
                "step": step,
            }
        )
    return state(records, logging_steps=1)


def trl_1x_fp16_overflow() -> dict:
    """1.x names; an fp16 run on a T4: the loss scaler skips the overflowing steps 23 and 61 (grad_norm NaN there),
    the loss finite before, at and after."""
    rng = random.Random(23)
    records = [modern(step, rng, 80) for step in range(1, 81)]
    for step in (23, 61):
        records[step - 1]["grad_norm"] = math.nan
    return state(records, logging_steps=1)


def trl_1x_logging_steps_10() -> dict:
    """logging_steps 10: grad_norm is the last step's of each window and reads 0.0 at steps 100-140 (that step's
    groups were flat), while the window's loss is non-zero and entropy falls from 1.50 to 0.93."""
    rng = random.Random(10)
    records = []
    for index, step in enumerate(range(10, 301, 10)):
        record = modern(step, rng, 300, entropy=r(1.5 - 0.57 * index / 29), loss=r(0.02 + abs(rng.gauss(0, 0.01))))
        if 100 <= step <= 140:
            record["grad_norm"] = 0.0
        records.append(record)
    return state(records, logging_steps=10)


def trl_1x_clipped_saturating() -> dict:
    """A 128-token cap: 90-99% of completions cut on 28 logs in a row (steps 8-35) while format_reward saturates at
    1.0 (its std 0 from step 14), so the total rises; accuracy_reward stays flat near 0.05."""
    rng = random.Random(128)
    records = []
    for step in range(1, 41):
        fmt = min(0.1 + step * 0.07, 1.0)
        acc = r(max(0.05 + rng.gauss(0, 0.01), 0.0))
        clipped = r(0.9 + rng.random() * 0.09) if 8 <= step <= 35 else r(0.6 + rng.random() * 0.2)
        records.append(
            modern(
                step,
                rng,
                40,
                **{
                    "completions/clipped_ratio": clipped,
                    "completions/mean_length": r(118 + rng.random() * 8)
                    if 8 <= step <= 35
                    else r(95 + rng.random() * 15),
                    "completions/max_length": 128.0,
                    "completions/max_terminated_length": 127.0,
                    "rewards/format_reward/mean": r(fmt),
                    "rewards/format_reward/std": 0.0 if fmt >= 1.0 else 0.3,
                    "rewards/accuracy_reward/mean": acc,
                    "rewards/accuracy_reward/std": 0.2,
                    "reward": r(fmt + acc),
                    "reward_std": 0.35,
                },
            )
        )
    return state(records, logging_steps=1)


def trl_1x_zero_std_and_kl() -> dict:
    """160 logs: frac_reward_zero_std >= 0.9 on 84 of them in stretches (3-8, 20-60, 90-126), and KL above 1 on 70
    (steps 16-19 and 95-160)."""
    rng = random.Random(84)
    zero = set(range(3, 9)) | set(range(20, 61)) | set(range(90, 127))
    high_kl = set(range(16, 20)) | set(range(95, 161))
    records = []
    for step in range(1, 161):
        over = {}
        if step in zero:
            over["frac_reward_zero_std"] = r(0.9 + rng.random() * 0.1)
        over["kl"] = r(1.2 + rng.random() * (3.0 if step > 130 else 1.0)) if step in high_kl else r(0.3)
        records.append(modern(step, rng, 160, **over))
    assert len(zero) == 84 and len(high_kl) == 70
    return state(records, logging_steps=1)


def trl_sft() -> dict:
    """An SFT run's state: loss, grad_norm, learning_rate, mean_token_accuracy, entropy: no GRPO metric."""
    rng = random.Random(5)
    records = [
        {
            "loss": r(2.0 - step / 100 + rng.gauss(0, 0.05)),
            "grad_norm": r(1.0 + abs(rng.gauss(0, 0.3))),
            "learning_rate": 2e-5,
            "entropy": r(1.8 - step / 200),
            "num_tokens": 8192.0 * step,
            "mean_token_accuracy": r(0.5 + step / 400),
            "epoch": r(step / 100),
            "step": step,
        }
        for step in range(5, 101, 5)
    ]
    return state(records, logging_steps=5)


def trl_one_step() -> dict:
    return state([modern(1, random.Random(1), 1)], logging_steps=1, max_steps=500)


STATES = {
    "trl-0.16-dead-rewards": trl_016_dead_rewards,
    "trl-1.x-fp16-overflow": trl_1x_fp16_overflow,
    "trl-1.x-logging-steps-10": trl_1x_logging_steps_10,
    "trl-1.x-clipped-saturating": trl_1x_clipped_saturating,
    "trl-1.x-zero-std-and-kl": trl_1x_zero_std_and_kl,
    "trl-sft": trl_sft,
    "trl-one-step": trl_one_step,
}

if __name__ == "__main__":
    for name, make in STATES.items():
        (HERE / f"{name}.json").write_text(json.dumps(make()) + "\n", encoding="utf-8")
