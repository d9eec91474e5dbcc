"""The GPU check stays runnable where no GPU is: its --dry-run builds the model (2 layers of the 0.5B Qwen2 shape)
and tokenizer and validates every config it would run."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_gpu_check_dry_run_builds_everything_and_every_config_validates(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), "--dry-run", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout[done.stdout.index("{") :])
    assert all(report[f"{name}_config_valid"] for name in ("runtime", "trl", "fsdp", "zero3"))
    assert report["tokenizer_round_trip"] == "<|im_start|>user\nsay cat<|im_end|>\n<|im_start|>assistant\n"
    assert (tmp_path / "model" / "config.json").exists() and report["parameters"] > 100_000_000
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["model_type"] == "qwen2" and config["hidden_size"] == 896  # Qwen2.5-0.5B's shape
