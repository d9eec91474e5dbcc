"""Conformance: every invalid file is caught at the right key and line; every real config passes.

The files are the repository's own (examples/, and tests/fixtures/invalid/ whose first line says what it expects)
and, where ../shared is present, the reference corpus (whose expectations are the table below)."""

from __future__ import annotations

import re
import time

import pytest

from grpo_schema import check_file
from grpo_schema.engine.batch_geometry import Geometry, problems, valid_world_sizes
from tests.conftest import CORPUS, FIXTURES, conformance_files, corpus_files, repo_files

# file number -> (code, key, severity). The key is what `fields` must name, as written in the file.
EXPECTED = {
    "01": ("GRPO-B001", "generation_batch_size", "error"),
    "02": ("GRPO-B002", "generation_batch_size", "error"),
    "04": ("GRPO-T002", "num_generations", "error"),
    "05": ("GRPO-B003", "generation_batch_size", "error"),
    "07": ("GRPO-T003", "loss_type", "error"),
    "08": ("GRPO-T003", "scale_rewards", "error"),
    "10": ("GRPO-T003", "vllm_mode", "error"),
    "11": ("GRPO-T003", "vllm_mode", "error"),
    "13": ("GRPO-L001", "epsilon_high", "error"),
    "14": ("GRPO-T002", "epsilon", "error"),
    "16": ("GRPO-T002", "temperature", "error"),
    "17": ("GRPO-T002", "top_p", "error"),
    "19": ("GRPO-T002", "min_p", "error"),
    "20": ("GRPO-K001", "num_generation", "error"),
    "22": ("GRPO-K001", "per_device_batch_size", "error"),
    "23": ("GRPO-T001", "num_generations", "error"),
    "25": ("GRPO-T001", "num_generations", "error"),
    "26": ("GRPO-T001", "num_generations", "error"),
    "28": ("GRPO-T001", "max_steps", "error"),
    "29": ("GRPO-T007", "reward_funcs", "error"),
    "31": ("GRPO-R002", "reward_funcs", "error"),
    "32": ("GRPO-I001", "vllm_importance_sampling_clip_min", "error"),
    "34": ("GRPO-T003", "vllm_importance_sampling_mode", "error"),
    "35": ("GRPO-O001", "log_completions_hub_repo", "error"),
    "37": ("GRPO-B004", "per_device_eval_batch_size", "error"),
    "38": ("GRPO-P001", "bf16", "error"),
    "40": ("GRPO-Y002", None, "error"),
    "41": ("GRPO-Y004", None, "error"),
    "43": ("GRPO-Y006", None, "error"),
    "44": ("GRPO-T003", "report_to", "error"),
    "46": ("GRPO-E003", "env.LD_PRELOAD", "error"),
    "47": ("GRPO-E001", "env", "error"),
    "49": ("GRPO-D001", "vllm_importance_sampling_cap", "warning"),
    "50": ("GRPO-K003", "max_prompt_length", "error"),
    "52": ("GRPO-K002", "torch_dtype", "error"),
    "53": ("GRPO-K002", "wandb_log_unique_prompts", "error"),
    "55": ("GRPO-T003", "importance_sampling_level", "error"),
    "56": ("GRPO-T003", "multi_objective_aggregation", "error"),
    "58": ("GRPO-T001", "vllm_server_port", "error"),
    "59": ("GRPO-T002", "vllm_gpu_memory_utilization", "error"),
    "61": ("GRPO-T002", "max_completion_length", "error"),
    "62": ("GRPO-T002", "per_device_train_batch_size", "error"),
    "64": ("GRPO-T005", "datasets[0].path", "error"),
    "65": ("GRPO-T001", "pad_to_multiple_of", "error"),
    "67": ("GRPO-T003", "train_sampling_strategy", "error"),
    "68": ("GRPO-T003", "report_to", "error"),
    "70": ("GRPO-T003", "optim", "error"),
    "71": ("GRPO-T003", "eval_strategy", "error"),
    "73": ("GRPO-T002", "num_iterations", "error"),
    "74": ("GRPO-T003", "vllm_model_impl", "error"),
    "76": ("GRPO-Y005", None, "error"),
}
MIGRATION_OR_UNKNOWN = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K006"}
# A file that carries another script's keys (K001/K006) is usually for that script's registry and dataset loader too:
# `trl grpo` refuses its reward names and missing sources as well (the corpus README measured the parser alone).
FOR_ANOTHER_SCRIPT = {"GRPO-R002", "GRPO-R004", "GRPO-S002"}
# A reward name of a known project's registry says by itself which script the file is for; `trl grpo` refuses it.
ANOTHER_PROJECTS_REWARD = "GRPO-R007"
# Refused by TRL 1.16 when the trainer is built, after the parser has accepted the file.
REFUSED_AT_TRAINER_INIT = {"29": {"GRPO-M007"}, "30": {"GRPO-M007"}}  # LoRA on lm_head
BATCH = {"GRPO-B001", "GRPO-B003", "GRPO-B004"}


def expectation(path) -> tuple[str, str | None, str]:
    """(code, key, severity) a broken file must produce: its `# expect:` line, or the corpus table's entry."""
    if FIXTURES in path.parents:
        code, key, severity = path.read_text().splitlines()[0].removeprefix("# expect:").split()
        return code, None if key == "-" else key, severity
    return EXPECTED[path.name[:2]]


def test_every_repository_fixture_says_what_it_expects():
    files = repo_files("invalid")
    assert len(files) >= 30
    assert all(expectation(path)[0].startswith("GRPO-") for path in files)


def _key_line(path, key: str) -> int:
    name = key.split(".")[-1] if key.startswith("env.") else key.split(".")[0].split("[")[0]
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if re.match(rf"\s*{re.escape(name)}\s*:", line))


def _item_line(path, key: str, index: int) -> int:
    """Line of entry `index` of the block list under the top-level `key`."""
    lines = path.read_text().splitlines()
    start = _key_line(path, key)
    items = [i for i, line in enumerate(lines[start:], start + 1) if re.match(r"\s*-\s", line)]
    return items[index]


def test_every_invalid_file_has_an_expectation(shared_dir):
    numbers = {p.name[:2] for p in corpus_files("invalid")}
    assert numbers == set(EXPECTED), f"corpus and table differ: {numbers ^ set(EXPECTED)}"


@pytest.mark.parametrize("path", conformance_files("invalid"), ids=lambda p: p.name)
def test_invalid_file_is_reported_at_its_key(path):
    code, key, severity = expectation(path)
    started = time.perf_counter()
    result = check_file(path)
    assert time.perf_counter() - started < 2, "validation must never hang"
    found = [d for d in result.diagnostics if d.code == code]
    assert found, f"{path.name}: expected {code}, got {[d.to_dict() for d in result.diagnostics]}"
    diag = found[0]
    assert diag.severity == severity
    assert diag.message and diag.hint, "every diagnostic says what is wrong and what to do"
    if severity == "error":
        assert not result.valid
    if key is not None:
        assert key in diag.fields
        item = re.fullmatch(rf"{re.escape(key)}\[(\d+)\]", diag.fields[0])
        if item:  # a finding about one list entry is shown at that entry's line
            assert diag.line == _item_line(path, key, int(item.group(1))), f"{path.name}: line {diag.line}"
        elif "." not in key or key.startswith("env."):
            assert diag.line == _key_line(path, key), f"{path.name}: line {diag.line} is not the line of {key}"
    else:
        assert diag.line is not None or code == "GRPO-Y005"


@pytest.mark.parametrize("path", conformance_files("valid"), ids=lambda p: p.name)
def test_valid_file_has_only_migration_and_unknown_key_errors(path):
    # At a world size where the batch geometry holds once the file is migrated (the rules judge migrated values):
    # the file's own, when it declares one that does (vLLM's tensor parallelism needs the declared processes).
    declared = check_file(path)
    sizes = valid_world_sizes(Geometry.of(declared.migrated))
    result = check_file(path, world_size=declared.world_size if declared.world_size in sizes else sizes[0])
    errors = {d.code for d in result.diagnostics if d.severity == "error"}
    allowed = MIGRATION_OR_UNKNOWN | REFUSED_AT_TRAINER_INIT.get(path.name[:2], set()) | {ANOTHER_PROJECTS_REWARD}
    if errors & {"GRPO-K001", "GRPO-K006"}:
        allowed |= FOR_ANOTHER_SCRIPT
    unexpected = [d.to_dict() for d in result.diagnostics if d.severity == "error" and d.code not in allowed]
    assert unexpected == []


@pytest.mark.parametrize("path", conformance_files("valid"), ids=lambda p: p.name)
def test_valid_file_batch_rules_follow_the_world_size(path):
    """At a declared num_processes the batch rules pass; at world size 1 they fail exactly when TRL's would."""
    declared = check_file(path)
    geometry = Geometry.of(declared.migrated)  # the batch rules judge the values a migration gives
    if "num_processes" in declared.launch:
        assert not set(c.code for c in declared.diagnostics) & BATCH
    at_one = check_file(path, world_size=1)
    fails_at_one = bool(set(d.code for d in at_one.diagnostics) & BATCH)
    assert fails_at_one == bool(problems(geometry, 1))
    assert valid_world_sizes(geometry), "every real config is valid for some world size"


@pytest.mark.parametrize("path", [p for p in conformance_files("valid") if "open-r1" in p.name], ids=lambda p: p.name)
def test_open_r1_profile_accepts_open_r1_keys(path):
    plain = check_file(path)
    profiled = check_file(path, profiles=["open-r1"])
    assert any(d.code == "GRPO-K006" for d in plain.diagnostics)
    assert not any(d.code in ("GRPO-K006", "GRPO-T001", "GRPO-T002", "GRPO-T003") for d in profiled.diagnostics), [
        d.to_dict() for d in profiled.diagnostics if d.severity == "error"
    ]


def test_corpus_readme_counts_hold(shared_dir):
    """README of the corpus: 61 real configs; 13 valid only at particular world sizes."""
    valid = corpus_files("valid")
    assert len(valid) == 61
    only_some = [p for p in valid if problems(Geometry.of(check_file(p).config), 1)]
    assert len(only_some) == 13
    assert CORPUS.is_dir()
