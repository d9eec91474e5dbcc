"""Run the grpo-config benchmarks side by side with TRL 1.16 and write benchmarks/results/latest.{md,json}.

    python benchmarks/run.py [--quick] [--only validate,service,runtime,imports,smoke] [--device cpu,cuda] [--out DIR]

validate = cold whole-process `grpo validate` (1) and in-process throughput (2); service = HTTP load on loopback
(3); runtime = grpo_runtime vs GRPOTrainer (4; the cuda variant says so and is skipped where there is no GPU);
imports = the import-time budget (5); lsp = `grpo lsp` keystroke latency (6); smoke = `grpo smoke` on every example
(7). --quick is for checking the harness: fewer runs, shorter loads.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python benchmarks/run.py` from anywhere

from benchmarks import cold, imports, inproc, lsp, machine, report, runtime, service, smoke  # noqa: E402
from benchmarks.common import EXAMPLES, REPO, benchmark_files  # noqa: E402

GROUPS = ("validate", "service", "runtime", "imports", "lsp", "smoke")
# Run sizes: (full, quick).
COLD_RUNS, COLD_WARMUP = (9, 2), (2, 0)
INPROC_SECONDS = (3.0, 0.3)
SERVICE_SECONDS, SERVICE_MAX_REQUESTS = (6.0, 1.0), (60000, 5000)
RUNTIME_STEPS, RUNTIME_REPEATS = (10, 4), (5, 1)
LSP_EDITS = (1000, 100)


def sections(args) -> dict:
    """Section name -> a function that measures it, for the groups asked for."""
    q = int(args.quick)
    files = benchmark_files(args.quick)
    chosen = {
        "validate": {"validate": lambda: cold.measure(files, COLD_RUNS[q], COLD_WARMUP[q]),
                     "inprocess": lambda: inproc.measure(files, INPROC_SECONDS[q])},
        "service": {"service": lambda: service.measure(SERVICE_SECONDS[q], SERVICE_MAX_REQUESTS[q])},
        "runtime": {("runtime" if device == "cpu" else f"runtime_{device}"):
                    (lambda device=device: runtime.measure(device, RUNTIME_STEPS[q], RUNTIME_REPEATS[q]))
                    for device in args.device},
        "imports": {"imports": lambda: imports.measure(EXAMPLES / "grpo-no-kl.yaml")},
        "lsp": {"lsp": lambda: lsp.measure(LSP_EDITS[q])},
        "smoke": {"smoke": lambda: smoke.measure(files=[EXAMPLES / "grpo.yaml"] if args.quick else None)},
    }
    return {name: fn for group in args.only for name, fn in chosen[group].items()}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and shorter loads (harness check)")
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(GROUPS),
                        help=f"comma-separated groups out of {','.join(GROUPS)}")
    parser.add_argument("--device", type=lambda s: s.split(","), default=["cpu", "cuda"],
                        help="runtime devices (cuda is skipped, and says so, where there is no GPU)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results", help="results folder")
    args = parser.parse_args(argv)
    unknown = set(args.only) - set(GROUPS) or set(args.device) - {"cpu", "cuda"}
    if unknown:
        parser.error(f"unknown choice(s): {', '.join(sorted(unknown))}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    command = " ".join(["python benchmarks/run.py", shlex.join(sys.argv[1:] if argv is None else argv)]).strip()
    results = {"command": command,
               "quick": args.quick, "date": datetime.datetime.now().isoformat(timespec="seconds"),
               "machine": machine.describe(), "load_start": machine.load_average(), "load": {}, "sections": {}}
    for name, measure in sections(args).items():
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        before = machine.load_average()
        results["sections"][name] = measure()
        results["load"][name] = {"before": before, "after": machine.load_average()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (args.out / "latest.md").write_text(report.render(results), encoding="utf-8")
    print(report.render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
