"""The example recipes in examples/: each validates clean at the world size it names, `grpo explain` walks it, and
the numbers its comments quote are the ones the schedule derives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grpo_schema import check_file
from grpo_web.presets import PRESET_DIR as EXAMPLES
from grpo_web.presets import read_preset
from tests.support.cli import grpo

FILES = sorted(EXAMPLES.glob("*.yaml"))
COVERED = {  # what people run, by the key that makes each recipe what it is
    "grpo": {"loss_type": "grpo"},
    "dapo": {"loss_type": "dapo"},
    "dr-grpo": {"loss_type": "dr_grpo"},
    "gspo": {"importance_sampling_level": "sequence"},
    "sapo": {"loss_type": "sapo"},
    "cispo": {"loss_type": "cispo"},
    "grpo-no-kl": {"beta": 0.0},
    "multi-iteration": {"num_iterations": 2},
    "lora-single-gpu": {"use_peft": True, "num_processes": 1},
    "vllm-colocate-8gpu": {"vllm_mode": "colocate"},
    "vllm-server-node": {"vllm_mode": "server"},
    "multinode-zero3": {"accelerate_config": "zero3", "num_machines": 2},
    "eval-during-training": {"eval_strategy": "steps"},
    "dataset-mixture": {},
    "open-r1": {},
    "demo": {},
}


def derived(path: Path, profiles: list[str]) -> dict:
    args = ["explain", str(path), "--format", "json"]
    args += [arg for name in profiles for arg in ("--profile", name)]
    done = grpo(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["derived"]


def test_the_library_covers_what_people_run():
    assert {p.stem for p in FILES} == set(COVERED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_validates_clean_and_explains(path):
    preset = read_preset(path)
    assert preset.title and preset.description
    result = check_file(path, profiles=preset.profiles)
    config = result.config
    assert "num_processes" in (result.sources or {}) or re.search(r"^num_processes:", preset.text, re.M)
    assert [d.code for d in result.diagnostics if d.severity != "info"] == []
    for key, value in COVERED[path.stem].items():
        assert getattr(config, key, None) == value or f"{key}: {str(value).lower()}" in preset.text, key
    numbers = derived(path, preset.profiles)
    assert numbers["world_size"] == result.world_size
    quoted = {int(n) for n in re.findall(r"= (\d+) completions", preset.text)}
    assert quoted, "the comments should say how many completions each step trains on"
    known = {numbers["generation_batch_size"], numbers["completions_per_optimizer_step"]}
    assert quoted <= known, f"comments quote {sorted(quoted)}, the schedule derives {sorted(known)}"


def test_every_example_says_what_each_process_does():
    for path in FILES:
        comments = " ".join(line for line in path.read_text().splitlines() if line.lstrip().startswith("#"))
        assert "prompts" in comments or "per prompt" in comments or path.stem == "demo", path.stem
