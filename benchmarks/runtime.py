"""4. Runtime: grpo_runtime vs TRL's GRPOTrainer on the same tiny model, config and seed (benchmarks/runtime_child).

The two trainers run alternately in fresh processes (ours, TRL, ours, TRL, ...) so that background load falls on
both. A step's time is the interval between two optimizer-step completions (wall and CPU); the first WARMUP
intervals of each run are dropped (allocator warm-up); the figure is the median over the rest of all runs.
Process wall time (imports, model load, training) is reported beside it.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import PYTHON, ratio, run_json_child
from benchmarks.runtime_child import SETTINGS

WARMUP = 1


def child(side: str, workdir: Path, device: str, steps: int, profile: Path | None = None) -> dict:
    argv = [PYTHON, "-m", "benchmarks.runtime_child", side, str(workdir), "--device", device, "--steps", str(steps)]
    if profile:
        argv += ["--profile", str(profile)]
    started = time.perf_counter()
    result = run_json_child(argv, timeout=1800)
    result["process_wall_s"] = time.perf_counter() - started
    return result


def _side_summary(runs: list[dict]) -> dict:
    steady = [t for run in runs for t in run["step_wall_s"][WARMUP:]]
    steady_cpu = [t for run in runs for t in run["step_cpu_s"][WARMUP:]]
    per_step = statistics.median(steady)
    completions = SETTINGS["per_device_train_batch_size"] * SETTINGS["gradient_accumulation_steps"]
    lengths = [x for run in runs for x in run["mean_completion_length"] if x is not None]
    tokens = completions * statistics.mean(lengths)
    return {
        "s_per_step": per_step,
        "completions_per_s": completions / per_step,
        "tokens_per_s": tokens / per_step,
        "cpu_s_per_step": statistics.median(steady_cpu),
        "completion_tokens_per_step": tokens,
        "steady_steps": len(steady),
        "runs": len(runs),
        "process_wall_s": statistics.median(run["process_wall_s"] for run in runs),
    }


def measure(device: str, steps: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="grpo-bench-") as tmp:
        workdir = Path(tmp)
        run_json_child([PYTHON, "-m", "benchmarks.runtime_child", "prepare", str(workdir)])
        first = child("ours", workdir, device, steps)
        if "skipped" in first:
            return {"device": device, "skipped": first["skipped"]}
        runs = {"ours": [first], "trl": [child("trl", workdir, device, steps)]}
        for _ in range(repeats - 1):
            for side in ("ours", "trl"):
                runs[side].append(child(side, workdir, device, steps))
    ours, trl = _side_summary(runs["ours"]), _side_summary(runs["trl"])
    speedup = ratio(trl["s_per_step"], ours["s_per_step"])
    cpu_speedup = ratio(trl["cpu_s_per_step"], ours["cpu_s_per_step"])
    return {
        "device": device,
        "steps_per_run": steps,
        "threads": runs["ours"][0]["threads"],
        "settings": SETTINGS,
        "ours": ours,
        "trl": trl,
        "speedup_vs_trl": speedup,
        "cpu_speedup_vs_trl": cpu_speedup,
        "targets": {f"throughput >= 1.3x TRL ({device})": {"value": speedup, "met": speedup >= 1.3}},
    }


def profile_ours(device: str, steps: int, out: Path, top: int = 25) -> str:
    """cProfile of one grpo_runtime run: the functions with the most cumulative time, as text."""
    import io
    import pstats

    with tempfile.TemporaryDirectory(prefix="grpo-bench-") as tmp:
        workdir = Path(tmp)
        run_json_child([PYTHON, "-m", "benchmarks.runtime_child", "prepare", str(workdir)])
        child("ours", workdir, device, steps, profile=out)
    text = io.StringIO()
    pstats.Stats(str(out), stream=text).sort_stats("cumulative").print_stats(top)
    return text.getvalue()
