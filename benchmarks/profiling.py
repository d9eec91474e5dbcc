"""Where the time goes: profiles behind the runtime and service figures, written to benchmarks/results/.

    python benchmarks/profiling.py [runtime] [service] [--steps N]

runtime: both trainers under cProfile on the benchmark's config (benchmarks/runtime_child.py); the training loop
split into generation (HF generate), the loss forward (per-token log-probs), backward, optimizer and the rest.
service: POST /api/v1/validate through the ASGI app in-process (no sockets): min CPU per request as shipped
(the fast lane) and through the FastAPI route alone, then a cProfile of the shipped app.
"""

from __future__ import annotations

import argparse
import io
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import PYTHON, REPO, run_json_child
from benchmarks.runtime import child

OUT = REPO / "benchmarks" / "results"
# (label, file suffix, function) whose cumulative time is one part of a training step.
PARTS = {
    "ours": [("loop", "grpo_runtime/train.py", "train_loop")],
    "trl": [("loop", "transformers/trainer.py", "_run_epoch")],
}
SHARED_PARTS = [
    ("generation (HF generate)", "generation/utils.py", "generate"),
    ("backward", "torch/autograd/graph.py", "_engine_run_backward"),
    ("optimizer step", "torch/optim/optimizer.py", "wrapper"),
]
# What to list under each loop: the trainer's own step functions (imports and setup left out).
LOOP_FUNCTIONS = {
    "ours": r"grpo_runtime/(train|batch|rollout|logprobs|loss|rewards|metrics|data)\.py",
    "trl": r"trl/trainer/grpo_trainer\.py|transformers/trainer\.py",
}
LOSS_FORWARD = {
    "ours": ("grpo_runtime/training/logprobs.py", "completion_logps"),
    "trl": ("trl/trainer/grpo_trainer.py", "_get_per_token_logps_and_entropies"),
}


def cumulative(stats: pstats.Stats, suffix: str, function: str) -> float:
    found = [row[3] for (path, _, name), row in stats.stats.items() if path.endswith(suffix) and name == function]
    return max(found, default=0.0)


def breakdown(side: str, stats: pstats.Stats) -> list[str]:
    loop = cumulative(stats, *PARTS[side][0][1:])
    parts = [(label, cumulative(stats, suffix, fn)) for label, suffix, fn in SHARED_PARTS]
    parts.insert(1, ("loss forward (log-probs, entropies)", cumulative(stats, *LOSS_FORWARD[side])))
    parts.append(("everything else (data, rewards, metrics, logging)", loop - sum(t for _, t in parts)))
    lines = [f"{side}: training loop {loop:.2f} s"]
    lines += [f"  {t / loop:6.1%}  {t:6.2f} s  {label}" for label, t in parts]
    return lines


def profile_runtime(steps: int) -> str:
    lines = []
    with tempfile.TemporaryDirectory(prefix="grpo-profile-") as tmp:
        workdir = Path(tmp)
        run_json_child([PYTHON, "-m", "benchmarks.runtime_child", "prepare", str(workdir)])
        for side in ("ours", "trl"):
            out = workdir / f"{side}.prof"
            child(side, workdir, "cpu", steps, profile=out)
            stats = pstats.Stats(str(out))
            lines += breakdown(side, stats)
            text = io.StringIO()
            pstats.Stats(str(out), stream=text).sort_stats("cumulative").print_stats(LOOP_FUNCTIONS[side], 14)
            table = [line for line in text.getvalue().splitlines() if line.strip()][-15:]
            lines += ["  inside the loop (cumulative):"] + ["    " + line for line in table] + [""]
    return "\n".join(lines) + "\n"


def profile_service() -> str:
    return run_json_child([PYTHON, "-m", "benchmarks.asgi_profile"])["text"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="*", help="runtime and/or service (default: both)")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    if set(args.what) - {"runtime", "service"}:
        parser.error("choose from runtime, service")
    OUT.mkdir(parents=True, exist_ok=True)
    for what in args.what or ("runtime", "service"):
        text = profile_runtime(args.steps) if what == "runtime" else profile_service()
        (OUT / f"profile_{what}.txt").write_text(text, encoding="utf-8")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
