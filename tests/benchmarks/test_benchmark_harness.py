"""The benchmark harness runs end to end (--quick --only validate) and writes both documents. No timing asserts:
the numbers are facts for the README, measured on a quiet machine, never pass/fail criteria."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("trl", reason="the benchmarks compare against trl==1.16.0 (a test-only dependency)")


@pytest.mark.slow
def test_quick_validate_run_writes_results(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--only", "validate", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "latest.json").read_text())
    assert set(results["sections"]) == {"validate", "inprocess"}
    cold = results["sections"]["validate"]["files"][0]
    assert cold["ours"]["wall_ms"]["median"] > 0 and cold["trl"]["peak_rss_mb"]["median"] > 0
    assert results["machine"]["cores"] >= 1 and results["machine"]["versions"]["trl"] == "1.16.0"
    markdown = (tmp_path / "latest.md").read_text()
    assert "## 1. Cold whole-process validation" in markdown and "## Targets" in markdown


@pytest.mark.slow
def test_quick_runtime_memory_run_measures_both_trainers(tmp_path):
    """One 64-token case (--quick): both trainers run a whole optimizer step in their own process and report a
    peak RSS above their post-import baseline; the section is rendered with its ratio."""
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "run.py"),
            "--quick",
            "--only",
            "runtime-memory",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    section = json.loads((tmp_path / "latest.json").read_text())["sections"]["runtime_memory"]
    (row,) = section["rows"]
    assert row["length"] == 64 and section["vocab"] == 151_936
    for side in ("ours", "trl"):
        assert row[side]["peak_rss_gib"] > row[side]["baseline_rss_gib"] > 0
    assert row["ratio"] == pytest.approx(row["ours"]["peak_rss_gib"] / row["trl"]["peak_rss_gib"])
    assert "## 7. Runtime memory" in (tmp_path / "latest.md").read_text()


@pytest.mark.slow
def test_quick_service_run_loads_a_real_server(tmp_path):
    """`grpo serve` under the load generator: every row answered without an error, the checked-anew row included
    (every body new, so none is answered from the kept answers)."""
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "run.py"),
            "--quick",
            "--only",
            "service",
            "--out",
            str(tmp_path),
            "--wait-idle",
            "0",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    section = json.loads((tmp_path / "latest.json").read_text())["sections"]["service"]
    rows = section["rows"] + [section["checked_anew"], section["corpus_mix"], section["healthz_floor"]]
    assert all(r["requests"] > 0 and r["errors"] == 0 for r in rows), rows
    assert "checked anew" in (tmp_path / "latest.md").read_text()
