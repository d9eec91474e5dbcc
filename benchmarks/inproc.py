"""2. In-process validation throughput: YAML text to diagnostics (every rule on) vs TRL's parser in-process.

Each side runs in its own child process (`python -m benchmarks.inproc ours|trl SECONDS FILE[:PROFILE]...`), so the
harness never imports TRL or torch and neither side warms the other's caches. Per file: warm up, then time batches
of calls (each batch about 50 ms) for a fixed budget; the figure is the median time per call over the batches.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from benchmarks.common import PYTHON, ratio, run_json_child

BATCH_SECONDS = 0.05
WARMUP_CALLS = 20


def measure(files: dict, seconds: float) -> dict:
    specs = [f"{path}:{','.join(profiles)}" for path, profiles in files.values()]
    ours = run_json_child([PYTHON, "-m", "benchmarks.inproc", "ours", str(seconds), *specs])
    trl = run_json_child([PYTHON, "-m", "benchmarks.inproc", "trl", str(seconds), *specs])
    rows = []
    for name, mine, theirs in zip(files, ours, trl):
        rows.append(
            {
                "file": name,
                "ours_ms": mine,
                "trl_ms": theirs,
                "speedup_vs_trl": ratio(theirs["median"], mine["median"]),
                "ours_per_s": ratio(1000, mine["median"]),
                "trl_per_s": ratio(1000, theirs["median"]),
            }
        )
    worst = min(r["speedup_vs_trl"] for r in rows)
    return {"files": rows, "targets": {"speedup_vs_trl >= 2": {"value": worst, "met": worst >= 2}}}


def time_calls(call, seconds: float) -> dict:
    """Median ms per call over ~50 ms batches, for `seconds` in all."""
    started = time.perf_counter()
    for _ in range(WARMUP_CALLS):
        call()
    per_call = (time.perf_counter() - started) / WARMUP_CALLS
    per_batch = max(1, round(BATCH_SECONDS / per_call))
    batches = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(batches) < 3:
        started = time.perf_counter()
        for _ in range(per_batch):
            call()
        batches.append((time.perf_counter() - started) * 1000 / per_batch)
    return {
        "median": statistics.median(batches),
        "min": min(batches),
        "batches": len(batches),
        "calls": len(batches) * per_batch,
    }


def ours_call(path: str, profiles: list[str]):
    from grpo_schema import check_text

    text = open(path, "rb").read()
    return lambda: check_text(text, path=path, profiles=profiles)


def trl_call(path: str, profiles: list[str]):
    import logging

    from benchmarks.trl_parse import make_fresh_parser, parse_with

    logging.disable(logging.WARNING)  # TRL logs a few warnings per parse; the console is not what is measured
    parser = make_fresh_parser()  # one parser per file: parse_args_and_config writes the file's values into it
    return lambda: parse_with(parser, path)


def child(side: str, seconds: float, specs: list[str]) -> None:
    build = ours_call if side == "ours" else trl_call
    results = []
    for spec in specs:
        path, _, names = spec.rpartition(":")
        results.append(time_calls(build(path, [n for n in names.split(",") if n]), seconds))
    print(json.dumps(results))


if __name__ == "__main__":
    child(sys.argv[1], float(sys.argv[2]), sys.argv[3:])
