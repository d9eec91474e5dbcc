"""Run the grpo-config benchmarks side by side with TRL 1.16 and write benchmarks/results/latest.{md,json}.

    python benchmarks/run.py [--quick] [--only validate,service,runtime,runtime-memory,imports,smoke] [--device cpu,cuda]
                             [--out DIR]

validate = cold whole-process `grpo validate` (1) and in-process throughput (2); service = HTTP load on loopback
(3); runtime = grpo_runtime vs GRPOTrainer (4; the cuda variant says so and is skipped where there is no GPU);
imports = the import-time budget (5); lsp = `grpo lsp` keystroke latency (6); runtime-memory = peak RSS of one
optimizer step, grpo_runtime vs GRPOTrainer, at 512/1024/2048-token completions (7; CPU, minutes, not in the
default run); smoke = `grpo smoke` on every example and corpus recipe (minutes, not in the default run). --quick is for checking
the harness: fewer runs, shorter loads.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python benchmarks/run.py` from anywhere

from benchmarks import cold, imports, inproc, lsp, machine, memory, report, runtime, service, smoke
from benchmarks.common import EXAMPLES, REPO, benchmark_files
from grpo_schema.engine.words import noun

GROUPS = ("validate", "service", "runtime", "imports", "lsp", "runtime-memory", "smoke")
# Long (minutes of CPU each): run only when asked for with --only.
DEFAULT_GROUPS = [g for g in GROUPS if g not in ("runtime-memory", "smoke")]
# Run sizes: (full, quick).
COLD_RUNS, COLD_WARMUP = (9, 2), (2, 0)
INPROC_SECONDS = (3.0, 0.3)
SERVICE_SECONDS, SERVICE_MAX_REQUESTS = (6.0, 1.0), (60000, 5000)
RUNTIME_STEPS, RUNTIME_REPEATS = (10, 4), (5, 1)
LSP_EDITS = (1000, 100)
MEMORY_LENGTHS = (memory.LENGTHS, (64,))


def sections(args) -> dict:
    """Section name -> a function that measures it, for the groups asked for."""
    q = int(args.quick)
    files = benchmark_files(args.quick)
    chosen = {
        "validate": {
            "validate": lambda: cold.measure(files, COLD_RUNS[q], COLD_WARMUP[q]),
            "inprocess": lambda: inproc.measure(files, INPROC_SECONDS[q]),
        },
        "service": {"service": lambda: service.measure(SERVICE_SECONDS[q], SERVICE_MAX_REQUESTS[q])},
        "runtime": {
            ("runtime" if device == "cpu" else f"runtime_{device}"): (
                lambda device=device: runtime.measure(device, RUNTIME_STEPS[q], RUNTIME_REPEATS[q])
            )
            for device in args.device
        },
        "imports": {"imports": lambda: imports.measure(EXAMPLES / "grpo-no-kl.yaml")},
        "lsp": {"lsp": lambda: lsp.measure(LSP_EDITS[q])},
        "runtime-memory": {"runtime_memory": lambda: memory.measure(MEMORY_LENGTHS[q])},
        "smoke": {
            "smoke": lambda: smoke.measure(
                files=[EXAMPLES / "grpo.yaml"] if args.quick else None, corpus=not args.quick
            )
        },
    }
    return {name: fn for group in args.only for name, fn in chosen[group].items()}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and shorter loads (harness check)")
    parser.add_argument(
        "--only",
        type=lambda s: s.split(","),
        default=DEFAULT_GROUPS,
        help=f"comma-separated groups out of {','.join(GROUPS)}",
    )
    parser.add_argument(
        "--device",
        type=lambda s: s.split(","),
        default=["cpu", "cuda"],
        help="runtime devices (cuda is skipped, and says so, where there is no GPU)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results", help="results folder")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=180.0,
        metavar="SECONDS",
        help="before each section, wait up to this long for an idle machine (default 180); a section "
        "measured on a busy machine is flagged and its targets are not counted as met",
    )
    args = parser.parse_args(argv)
    unknown = set(args.only) - set(GROUPS) or set(args.device) - {"cpu", "cuda"}
    if unknown:
        parser.error(f"unknown {noun(len(unknown), 'choice')}: {', '.join(sorted(unknown))}")
    return args


def flag_if_busy(section: dict, busy: bool) -> dict:
    """On a busy machine a target is reported as not met, whatever was measured (the number is kept)."""
    # peak memory counts bytes, which other processes' load does not change (runtime-memory says so)
    if busy and section.get("load_sensitive", True):
        for got in section.get("targets", {}).values():
            got["met"], got["busy"] = False, True
    return section


def main(argv=None) -> int:
    args = parse_args(argv)
    command = " ".join(["python benchmarks/run.py", shlex.join(sys.argv[1:] if argv is None else argv)]).strip()
    results = {
        "command": command,
        "quick": args.quick,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine.describe(),
        "load_start": machine.load_average(),
        "load": {},
        "sections": {},
    }
    for name, measure in sections(args).items():
        before, busy = machine.wait_for_idle(0 if args.quick else args.wait_idle)
        print(
            f"[bench] {name} ... (load {before}{', BUSY: not a result' if busy else ''})", file=sys.stderr, flush=True
        )
        results["sections"][name] = flag_if_busy(measure(), busy)
        results["load"][name] = {
            "before": before,
            "after": machine.load_average(),
            "busy": busy,
            "busy_threshold": machine.busy_threshold(),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (args.out / "latest.md").write_text(report.render(results), encoding="utf-8")
    print(report.render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
