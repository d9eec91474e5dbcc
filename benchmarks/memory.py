"""7. Runtime memory: peak RSS of one optimizer step, grpo_runtime vs TRL's GRPOTrainer (benchmarks/memory_child).

For each completion length, the two trainers run one after the other in fresh processes on the same tiny model
with a 151,936-token vocabulary, so the LM head (the logits) dominates memory as it does in real models. The
figure is each process's peak RSS (ru_maxrss); the ratio is ours / TRL's (<= 1.0: grpo_runtime needs no more).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import PYTHON, ratio, run_json_child
from benchmarks.machine import load_average
from benchmarks.memory_child import SETTINGS, VOCAB

LENGTHS = (512, 1024, 2048)
GIB = 1 << 30


def child(side: str, workdir: Path, length: int) -> dict:
    started, load = time.perf_counter(), load_average()
    result = run_json_child(
        [PYTHON, "-m", "benchmarks.memory_child", side, str(workdir), "--length", str(length)], timeout=3600
    )
    return {
        "peak_rss_gib": result["peak_rss_bytes"] / GIB,
        "baseline_rss_gib": result["baseline_rss_bytes"] / GIB,
        "process_wall_s": time.perf_counter() - started,
        "load_before": load,
        "load_after": load_average(),
    }


def measure(lengths=LENGTHS) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="grpo-mem-") as tmp:
        workdir = Path(tmp)
        run_json_child([PYTHON, "-m", "benchmarks.memory_child", "prepare", str(workdir)])
        for length in lengths:
            ours, trl = child("ours", workdir, length), child("trl", workdir, length)
            rows.append(
                {"length": length, "ours": ours, "trl": trl, "ratio": ratio(ours["peak_rss_gib"], trl["peak_rss_gib"])}
            )
    worst = max(row["ratio"] for row in rows)
    return {
        "vocab": VOCAB,
        "settings": SETTINGS,
        "rows": rows,
        "load_sensitive": False,
        "targets": {"peak RSS ours / TRL <= 1.0 at every length": {"value": worst, "met": worst <= 1.0}},
    }
