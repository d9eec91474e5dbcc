"""5. Import-time budget: `python -X importtime -c "import grpo_schema"` and `grpo validate FILE` end to end.

Each is run RUNS times; the run with the median total is reported. Top contributors are counted by self time
(where the time really goes) and per top-level package (the self times of all its modules added up). Heavy modules
that the slim install must never load (torch, transformers, accelerate, fastapi, pydantic's model machinery) are
listed as offenders when they appear.
"""

from __future__ import annotations

import statistics
import subprocess

from benchmarks.common import BIN, PYTHON, REPO, child_env

RUNS = 5
TOP = 10
# Modules whose presence in a validation process means a heavy import was not kept lazy.
MUST_STAY_LAZY = (
    "torch",
    "transformers",
    "accelerate",
    "trl",
    "datasets",
    "fastapi",
    "uvicorn",
    "pydantic.main",
    "ruamel.yaml",
    "numpy",
    "grpo_runtime",
    "web",
)


def parse_importtime(stderr: str) -> list[dict]:
    """Rows of -X importtime output: module, self_us, cumulative_us, depth (0 = imported from top level)."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:") :].split("|")
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        rows.append(
            {"module": name.strip(), "self_us": int(self_us), "cumulative_us": int(cumulative_us), "depth": depth}
        )
    return rows


def one_run(argv: list[str]) -> list[dict]:
    done = subprocess.run(
        argv, cwd=REPO, env=child_env(PYTHONPROFILEIMPORTTIME="1"), capture_output=True, text=True, timeout=120
    )
    return parse_importtime(done.stderr)


def analyse(rows: list[dict]) -> dict:
    by_package: dict[str, int] = {}
    for row in rows:
        package = row["module"].split(".")[0]
        by_package[package] = by_package.get(package, 0) + row["self_us"]
    loaded = {row["module"] for row in rows}
    return {
        "total_ms": sum(row["self_us"] for row in rows) / 1000,
        "modules": len(rows),
        "top_self": [
            {"module": r["module"], "ms": r["self_us"] / 1000} for r in sorted(rows, key=lambda r: -r["self_us"])[:TOP]
        ],
        "top_packages": [
            {"package": name, "ms": us / 1000}
            for name, us in sorted(by_package.items(), key=lambda item: -item[1])[:TOP]
        ],
        "offenders": sorted(m for m in MUST_STAY_LAZY if m in loaded),
    }


def median_run(argv: list[str]) -> dict:
    one_run(argv)  # warm the .pyc files
    runs = [analyse(one_run(argv)) for _ in range(RUNS)]
    middle = statistics.median_low([r["total_ms"] for r in runs])
    return next(r for r in runs if r["total_ms"] == middle)


def measure(sample_file) -> dict:
    return {
        "import grpo_schema": median_run([PYTHON, "-c", "import grpo_schema"]),
        "grpo validate": median_run([str(BIN / "grpo"), "validate", str(sample_file)]),
        "import pydantic, yaml (floor)": median_run([PYTHON, "-c", "import pydantic, yaml"]),
    }
