"""The schema's if/then clauses say exactly what the Python rules say: each one flags a file the rule rejects
(as an error), on the key the clause names, and lets the corrected file through."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from grpo_schema import check_mapping
from grpo_schema.engine.env import HIJACK_NAMES, is_hijack, is_secret
from grpo_schema.schema_export.conditionals import conditionals
from tests.editor.conftest import SCHEMAS

BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
}
# code -> [(a file the rule rejects, the same file corrected)]
CASES = {
    "GRPO-B002": [({"generation_batch_size": 16, "steps_per_generation": 2}, {"generation_batch_size": 16})],
    "GRPO-B005": [({"auto_find_batch_size": True}, {"auto_find_batch_size": False})],
    "GRPO-M001": [
        ({"load_in_8bit": True, "load_in_4bit": True, "use_peft": True}, {"load_in_8bit": True, "use_peft": True})
    ],
    "GRPO-M002": [
        ({"load_in_4bit": True}, {"load_in_4bit": True, "use_peft": True}),
        ({"load_in_8bit": True, "use_peft": False}, {"load_in_8bit": True, "use_peft": True}),
    ],
    "GRPO-M006": [
        (
            {"liger_kernel_config": {"fused_linear_cross_entropy": True}},
            {"liger_kernel_config": {"fused_linear_cross_entropy": False}},
        )
    ],
    "GRPO-L003": [({"loss_type": "dr_grpo", "max_completion_length": None}, {"loss_type": "dr_grpo"})],
    "GRPO-L007": [({"sync_ref_model": True}, {"sync_ref_model": True, "beta": 0.04})],
    "GRPO-L008": [({"sync_ref_model": True, "use_peft": True, "beta": 0.04}, {"use_peft": True, "beta": 0.04})],
    "GRPO-P001": [({"fp16": True, "bf16": True}, {"fp16": True, "bf16": False})],
    "GRPO-P002": [({"fp16_full_eval": True, "bf16_full_eval": True}, {"fp16_full_eval": True})],
    "GRPO-W001": [
        (
            {"fsdp": "full_shard", "deepspeed": "zero3.json", "num_processes": 2},
            {"deepspeed": "zero3.json", "num_processes": 2},
        )
    ],
    "GRPO-W003": [({"parallelism_config": {"dp_replicate_size": 2}}, {"parallelism_config": None})],
    "GRPO-W004": [({"accelerator_config": {"split_batch": True}}, {"accelerator_config": {"split_batches": True}})],
    "GRPO-O001": [
        (
            {"log_completions_hub_repo": "me/completions"},
            {"log_completions_hub_repo": "me/completions", "log_completions": True},
        )
    ],
    "GRPO-O004": [({"save_strategy": "best"}, {"save_strategy": "best", "metric_for_best_model": "eval_reward"})],
    "GRPO-O005": [({"lr_scheduler_type": "greedy"}, {"lr_scheduler_type": "greedy", "eval_strategy": "epoch"})],
    "GRPO-O006": [
        (
            {"lr_scheduler_type": "cosine", "lr_scheduler_kwargs": {"min_lr": 1e-7}},
            {"lr_scheduler_type": "cosine", "lr_scheduler_kwargs": {"num_cycles": 0.5}},
        ),
        ({"lr_scheduler_kwargs": {"num_cycles": 0.5}}, {"lr_scheduler_kwargs": {}}),
    ],
    "GRPO-O007": [({"dataloader_prefetch_factor": 2}, {"dataloader_prefetch_factor": 2, "dataloader_num_workers": 2})],
    "GRPO-I002": [
        (
            {"vllm_importance_sampling_mode": "token_truncate", "vllm_importance_sampling_clip_max": None},
            {"vllm_importance_sampling_mode": "token_truncate", "vllm_importance_sampling_clip_max": 2.0},
        )
    ],
    "GRPO-I003": [
        (
            {"loss_type": "vespo", "use_vllm": True},
            {"loss_type": "vespo", "use_vllm": True, "vllm_importance_sampling_mode": "token_mask"},
        )
    ],
    "GRPO-S004": [
        ({"dataset_streaming": True}, {"dataset_streaming": True, "max_steps": 100}),
        (
            {"datasets": [{"path": "trl-lib/DeepMath-103K"}], "streaming": True},
            {"datasets": [{"path": "trl-lib/DeepMath-103K"}], "streaming": True, "max_steps": 100},
        ),
    ],
}


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((SCHEMAS / "grpo-config.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema, format_checker=None)


def schema_errors_of(validator, config: dict, code: str) -> list:
    return [e for e in validator.iter_errors(config) if code in str(e.schema.get("errorMessage", ""))]


def test_every_clause_has_cases():
    assert {c.code for c in conditionals()} == set(CASES)


@pytest.mark.parametrize("code,bad,good", [(code, bad, good) for code, pairs in CASES.items() for bad, good in pairs])
def test_clause_agrees_with_the_python_rule(validator, code, bad, good):
    bad, good = {**BASE, **bad}, {**BASE, **good}
    assert code in [d.code for d in check_mapping(bad).diagnostics if d.severity == "error"]
    assert code not in [d.code for d in check_mapping(good).diagnostics]
    errors = schema_errors_of(validator, bad, code)
    targets = {c.target.split(".")[0] for c in conditionals() if c.code == code}
    assert errors and all(e.absolute_path and e.absolute_path[0] in targets for e in errors)
    assert schema_errors_of(validator, good, code) == []


def test_a_plain_config_passes_every_clause(validator):
    assert list(validator.iter_errors(BASE)) == []
    assert list(validator.iter_errors({})) == []


def test_recipe_snippets_are_valid_configs(validator):
    from grpo_schema.schema_export.snippets import recipe_configs

    for label, config in recipe_configs():
        assert [d.code for d in check_mapping(config).diagnostics if d.severity != "info"] == [], label
        assert list(validator.iter_errors(config)) == [], label
    assert [s["label"] for s in validator.schema["defaultSnippets"]] == [label for label, _ in recipe_configs()]


NAMES = sorted(HIJACK_NAMES) + [
    "LD_PRELOAD",
    "ld_library_path",
    "DYLD_INSERT_LIBRARIES",
    "path",
    "HF_TOKEN",
    "WANDB_API_KEY",
    "my_apikey",
    "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWORD",
    "X_AUTH",
    "HF_HOME",
    "WANDB_PROJECT",
    "CUDA_VISIBLE_DEVICES",
    "AUTHOR",
    "PATHS",
    "_X",
    "1X",
    "A-B",
    "OMP_NUM_THREADS",
]


def test_env_names_are_refused_exactly_as_the_python_validator_refuses_them(validator):
    pattern = re.compile(validator.schema["properties"]["env"]["propertyNames"]["pattern"])
    for name in NAMES:
        python_accepts = (
            bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)) and not is_hijack(name) and not is_secret(name)
        )
        assert bool(pattern.match(name)) == python_accepts, name
