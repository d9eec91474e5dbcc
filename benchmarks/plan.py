"""`grpo plan` on the whole valid corpus with --hardware 8xH100-80GB: one process, median of N runs (target: the
whole corpus under 2 s), plus the in-process time per file (check, estimate and the fix search included).

    python benchmarks/plan.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import CORPUS

TARGET_S = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = sorted(str(p) for p in CORPUS.glob("*.yaml"))
    if not files:
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    command = [
        sys.executable,
        "-m",
        "grpo_schema",
        "plan",
        *files,
        "--hardware",
        "8xH100-80GB",
        "--profile",
        "open-r1",
        "--format",
        "json",
    ]
    walls, cpus = [], []
    for _ in range(args.runs):
        start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run(command, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
        if "Traceback" in run.stderr or run.returncode not in (0, 1):
            print(run.stderr[-2000:], file=sys.stderr)
            return 1
    docs = json.loads(run.stdout)["files"]
    from grpo_schema.commands.plan import check_for_hardware
    from grpo_schema.engine.check import resolve_profiles

    profiles = resolve_profiles(["open-r1"])
    start = time.perf_counter()
    for path in files:
        check_for_hardware(Path(path).read_bytes(), path, "8xH100-80GB", profiles=profiles, batch_fixes=False)
    per_file_ms = (time.perf_counter() - start) / len(files) * 1000
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    verdicts = {
        k: sum(1 for d in docs if d["fits"] is v) for k, v in (("fit", True), ("no fit", False), ("no estimate", None))
    }
    print(
        f"| `grpo plan` on the {len(files)}-file corpus, --hardware 8xH100-80GB (whole process, median of "
        f"{args.runs}) | {wall:.2f} s wall, {cpu:.2f} s CPU ({per_file_ms:.1f} ms/file in process; load average "
        f"{os.getloadavg()[0]:.1f}) | target < {TARGET_S:g} s: {'met' if wall < TARGET_S else 'NOT met'} | "
        f"{verdicts} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
