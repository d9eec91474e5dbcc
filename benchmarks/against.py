"""The service's cost per request against an earlier commit, on this machine, in the same run.

    python benchmarks/against.py REF [--rounds N] [--trials N] [--per-trial N] [--out FILE.json]

An absolute latency says as much about the host as about the code: the same commit measures 2-3x apart on two
machines of this project's kind. This compares code with code: REF is checked out in a temporary git worktree,
and both apps answer POST /api/v1/validate in-process (benchmarks/against_child.py), each body new so every request
is checked anew, alternating ROUNDS times so that a change of load falls on both. Reported: the least CPU time per
request of each side, their ratio, and GET /healthz beside them (the framework floor: equal when the machine is).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import PYTHON, REPO, run_json_child
from benchmarks.service import BODY_FILE

CHILD = Path(__file__).resolve().parent / "against_child.py"
# Import names of our packages -> their folder in a checkout (the service was `web` before it was `grpo_web`).
PACKAGES = {"grpo_schema": "grpo_schema", "grpo_runtime": "grpo_runtime", "grpo_web": "web", "web": "web"}


def import_root(checkout: Path, into: Path) -> Path:
    """A folder whose entries are a checkout's packages under their import names: first on PYTHONPATH, it wins
    over the editable install of this checkout."""
    into.mkdir()
    for name, folder in PACKAGES.items():
        if (checkout / folder).is_dir():
            (into / name).symlink_to(checkout / folder)
    return into


def measure_side(root: Path, trials: int, per_trial: int) -> dict:
    argv = [PYTHON, str(CHILD), str(BODY_FILE), str(trials), str(per_trial)]
    return run_json_child(argv, timeout=600, PYTHONPATH=str(root))


def compare(ref: str, rounds: int, trials: int, per_trial: int) -> dict:
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="grpo-against-") as tmp:
        worktree = Path(tmp) / "checkout"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(worktree), commit], check=True)
        try:
            roots = {
                "this checkout": import_root(REPO, Path(tmp) / "this"),
                commit: import_root(worktree, Path(tmp) / "ref"),
            }
            runs = {side: [] for side in roots}
            for _ in range(rounds):
                for side, root in roots.items():
                    runs[side].append(measure_side(root, trials, per_trial))
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], check=False)
    best = {side: {key: min(run[key] for run in side_runs) for key in side_runs[0]} for side, side_runs in runs.items()}
    ours, theirs = best["this checkout"], best[commit]
    return {
        "ref": ref,
        "commit": commit,
        "body_file": BODY_FILE.name,
        "rounds": rounds,
        "sides": best,
        "validate_ratio": ours["validate_ms"] / theirs["validate_ms"],
        "healthz_ratio": ours["healthz_ms"] / theirs["healthz_ms"],
        "load_average": list(os.getloadavg()),
    }


def report(result: dict) -> str:
    lines = [
        f"POST /api/v1/validate ({result['body_file']}, every body new), least CPU per request, "
        f"{result['rounds']} alternating rounds, load average {result['load_average'][0]:.2f}:"
    ]
    for side, best in result["sides"].items():
        lines.append(f"  {side:<14} validate {best['validate_ms']:.3f} ms   healthz {best['healthz_ms']:.3f} ms")
    lines.append(
        f"  this checkout / {result['commit']}: validate {result['validate_ratio']:.2f}x, "
        f"healthz {result['healthz_ratio']:.2f}x"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="a commit, tag or branch to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--per-trial", type=int, default=100)
    parser.add_argument("--out", type=Path, help="also write the result as JSON here")
    args = parser.parse_args(argv)
    result = compare(args.ref, args.rounds, args.trials, args.per_trial)
    print(report(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
