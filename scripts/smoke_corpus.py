"""`grpo smoke` on every file of ../shared/grpo-corpus/valid that `grpo train --dry-run` accepts.

    python scripts/smoke_corpus.py [--out FILE.json] [--only PATTERN]

One line per file (dry-run verdict, smoke verdict, seconds, failing component), then the totals; --out writes them
as JSON. Each file runs in its own `grpo smoke --format json` process from a scratch working directory."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"


def grpo(*args: str, cwd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "grpo_schema.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default="*.yaml")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    rows = []
    for path in sorted(CORPUS.glob(args.only)):
        with tempfile.TemporaryDirectory() as cwd:
            dry = grpo("train", str(path), "--dry-run", cwd=cwd).returncode
            row = {"file": path.name, "dry_run": dry}
            if dry == 0:
                started = time.perf_counter()
                done = grpo("smoke", str(path), "--format", "json", cwd=cwd)
                try:
                    report = json.loads(done.stdout)
                except ValueError:
                    report = {
                        "passed": False,
                        "exit_code": done.returncode,
                        "component": "process",
                        "error": done.stderr[-500:],
                    }
                row.update(
                    seconds=round(time.perf_counter() - started, 1),
                    passed=report["passed"],
                    exit_code=report["exit_code"],
                    component=report.get("component"),
                    error=(report.get("error") or "")[:400],
                    world_size=report.get("world_size"),
                )
        rows.append(row)
        print(json.dumps(row), flush=True)
    accepted = [r for r in rows if r["dry_run"] == 0]
    passed = [r for r in accepted if r["passed"]]
    summary = {
        "files": len(rows),
        "accepted_by_dry_run": len(accepted),
        "smoke_passed": len(passed),
        "slowest_s": max((r["seconds"] for r in accepted), default=0),
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0 if len(passed) == len(accepted) else 1


if __name__ == "__main__":
    sys.exit(main())
