"""check-jsonschema (PyPI), run as CI and pre-commit run it, on the corpus of real and broken configs.

Valid corpus: every file, migrated for TRL 1.16 (`grpo_schema.commands.migrate`), passes the lenient schema, and the strict
schema of its profile gives the same verdict as `grpo validate` on the errors a schema can express. The 16 files
it refuses are forks of open-r1 and other projects with script keys or reward names of their own, which
`grpo validate` refuses too (GRPO-K001, GRPO-R002).

Invalid corpus: the strict schema refuses every file whose mistake is structural, at the key that is wrong; the
arithmetic mistakes stay with the Python validator (listed below, each with its reason).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_schema import check_text
from grpo_schema.commands.migrate import migrate_text
from grpo_schema.schema_export.conditionals import conditionals
from tests.conftest import CORPUS, corpus_files
from tests.editor.conftest import SCHEMAS, run_check_jsonschema

STRICT = {(): SCHEMAS / "grpo-config.schema.json", ("open-r1",): SCHEMAS / "grpo-config.open-r1.schema.json"}
LENIENT = SCHEMAS / "grpo-config.lenient.draft-07.schema.json"
# Codes of errors the strict schema expresses: keys, types, ranges, choices, reward names, env, if/then clauses.
SCHEMA_CODES = {
    "GRPO-K001",
    "GRPO-K002",
    "GRPO-K003",
    "GRPO-K004",
    "GRPO-K006",
    "GRPO-K007",
    "GRPO-T001",
    "GRPO-T002",
    "GRPO-T003",
    "GRPO-T005",
    "GRPO-T007",
    "GRPO-T008",
    "GRPO-R002",
    "GRPO-R003",
    "GRPO-E001",
    "GRPO-E002",
    "GRPO-E003",
    "GRPO-E004",
    "GRPO-E005",
} | {c.code for c in conditionals()}
FORKS = {  # valid corpus files (by number) the strict schema refuses, and why
    "10": "remote_gen_model_url, a key of this open-r1 branch's script",
    "14": "code_eval_partial_grading, a key of this open-r1 branch's script",
    "17": "reward function fashion_relevance, registered by this fork only",
    "19": "dataset_id_or_path, a key of this tutorial's own script",
    "20": "eval_dataset_names, a key of CPPO's script",
    "21": "40 keys of maxent-grpo's script, and its reward function",
    "22": "25 keys of maxent-grpo's script, and its reward function",
    "23": "advantage, token_broadcast, reward_batch_size of GOPO's script, and its reward function",
    "24": "advantage, token_broadcast of GOPO's script, and its reward function",
    "26": "eos_token, a key of Post-Completion-Learning's script",
    "27": "reward function gspo_default of Re-DeepResearcher",
    "28": "reward function gspo_default of Re-DeepResearcher",
    "29": "dataset_type, eval_dataset_name and reward functions of EleutherAI's fork",
    "30": "dataset_type, eval_dataset_name and reward functions of EleutherAI's fork",
    "31": "dataset_num_proc, packing, padding_free of the OLMo branch",
    "32": "use_fast_trainer, peft_type of fast-open-r1",
}
EXPRESSIBLE = {  # invalid corpus file -> (JSON path of the refused key, what catches it)
    "02_both_generation_batch_size_and_steps_per_generation.yaml": ("$.steps_per_generation", "if/then GRPO-B002"),
    "04_num_generations_zero.yaml": ("$.num_generations", "minimum 2"),
    "07_unknown_loss_type.yaml": ("$.loss_type", "enum"),
    "08_scale_rewards_invalid_value.yaml": ("$.scale_rewards", "enum or boolean"),
    "10_vllm_mode_invalid.yaml": ("$.vllm_mode", "enum"),
    "11_vllm_mode_legacy_async_server.yaml": ("$.vllm_mode", "enum"),
    "14_negative_epsilon.yaml": ("$.epsilon", "exclusiveMinimum 0"),
    "16_temperature_negative.yaml": ("$.temperature", "exclusiveMinimum 0"),
    "17_top_p_above_one.yaml": ("$.top_p", "maximum 1"),
    "19_min_p_above_one.yaml": ("$.min_p", "maximum 1"),
    "20_typo_num_generation.yaml": ("$", "additionalProperties false"),
    "22_typo_per_device_batch_size.yaml": ("$", "additionalProperties false"),
    "23_wrong_type_num_generations_word.yaml": ("$.num_generations", "type integer"),
    "25_wrong_type_float_for_int.yaml": ("$.num_generations", "type integer"),
    "26_wrong_type_bool_for_int.yaml": ("$.num_generations", "type integer (a boolean is not one)"),
    "29_reward_funcs_scalar_string.yaml": ("$.reward_funcs", "type array"),
    "31_reward_funcs_unknown_name.yaml": ("$.reward_funcs", "registry names or a dotted path"),
    "34_is_mode_invalid.yaml": ("$.vllm_importance_sampling_mode", "enum"),
    "35_log_completions_hub_repo_without_log_completions.yaml": ("$.log_completions_hub_repo", "if/then GRPO-O001"),
    "38_fp16_and_bf16_both_true.yaml": ("$.bf16", "if/then GRPO-P001"),
    "41_not_a_mapping.yaml": ("$", "type object"),
    "44_yaml_alias_into_known_field.yaml": ("$.report_to", "a name or a flat list of names"),
    "46_env_dangerous_variables.yaml": ("$.env", "propertyNames pattern"),
    "47_env_not_a_mapping.yaml": ("$.env", "type object"),
    "50_removed_max_prompt_length.yaml": ("$.max_prompt_length", "removed key: not {}"),
    "52_removed_warmup_ratio_and_torch_dtype.yaml": ("$.warmup_ratio", "removed and renamed keys: not {}"),
    "53_renamed_wandb_log_unique_prompts.yaml": ("$.wandb_log_unique_prompts", "renamed key: not {}"),
    "55_importance_sampling_level_invalid.yaml": ("$.importance_sampling_level", "enum"),
    "56_multi_objective_aggregation_invalid.yaml": ("$.multi_objective_aggregation", "enum"),
    "58_vllm_server_port_not_int.yaml": ("$.vllm_server_port", "type integer"),
    "59_vllm_gpu_memory_utilization_percent.yaml": ("$.vllm_gpu_memory_utilization", "maximum 1"),
    "61_negative_max_completion_length.yaml": ("$.max_completion_length", "minimum 1 or null"),
    "62_zero_per_device_batch.yaml": ("$.per_device_train_batch_size", "minimum 1"),
    "64_datasets_mixture_missing_path.yaml": ("$.datasets[0]", "required path"),
    "65_pad_to_multiple_of_word.yaml": ("$.pad_to_multiple_of", "integer, 'auto' or null"),
    "67_train_sampling_strategy_invalid_choice.yaml": ("$.train_sampling_strategy", "enum"),
    "68_report_to_typo.yaml": ("$.report_to", "enum"),
    "70_optim_typo.yaml": ("$.optim", "enum"),
    "71_eval_strategy_typo.yaml": ("$.eval_strategy", "enum"),
    "73_num_iterations_zero.yaml": ("$.num_iterations", "minimum 1"),
    "74_vllm_model_impl_invalid.yaml": ("$.vllm_model_impl", "enum"),
    "76_empty_file.yaml": ("$", "type object (an empty document is null)"),
}
NOT_EXPRESSIBLE = {  # invalid corpus file -> why the schema accepts it (grpo validate still refuses it)
    "01_gen_batch_not_divisible_by_num_generations.yaml": "arithmetic across fields (GRPO-B001)",
    "05_gen_batch_not_divisible_by_global_batch.yaml": "arithmetic with the world size (GRPO-B003)",
    "13_epsilon_high_below_epsilon.yaml": "compares two fields' values (GRPO-L001)",
    "28_yaml11_exponent_int_field.yaml": "YAML 1.2 (editors, check-jsonschema) reads 1e3 as the number 1000; only "
    "PyYAML, which TRL uses, reads the string '1e3'",
    "32_is_clip_min_ge_max.yaml": "compares two fields' values (GRPO-I001)",
    "37_eval_batch_not_divisible_by_num_generations_eval.yaml": "arithmetic with the world size (GRPO-B004)",
    "49_deprecated_vllm_importance_sampling_cap.yaml": "a deprecation warning, not an error: editors flag the key "
    "(deprecationMessage), validators accept it",
}
NOT_PARSED = {  # refused by check-jsonschema's YAML parser before any schema is involved, or never run
    "40_malformed_yaml_tabs.yaml": "tab indentation is a YAML syntax error",
    "43_yaml_billion_laughs.yaml": "check-jsonschema's parser expands the alias bomb (it took over 16 GB here), so "
    "it is not run; grpo validate refuses it before expanding",
}


def check_json(schema: Path, files: list[Path]) -> dict:
    result = run_check_jsonschema("--schemafile", str(schema), "-o", "JSON", *map(str, files))
    report = json.loads(result.stdout)
    assert result.returncode == (0 if report["status"] == "ok" else 1), result.stderr
    return report


def refused(report: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for error in report.get("errors", []) + report.get("parse_errors", []):
        out.setdefault(Path(error["filename"]).name, []).append(error.get("path", "<parse>"))
    return out


def migrate(text: str) -> tuple[str, list[str], set[str]]:
    """(migrated text, its profiles, the schema-expressible error codes grpo validate reports for it).

    `grpo migrate` for TRL 1.16 under the file's profile, then repeated same-value keys (GRPO-Y014) are dropped:
    PyYAML keeps the last, check-jsonschema's YAML parser (ruamel) refuses the file.
    """
    result = check_text(text)
    profiles = ["open-r1"] if "GRPO-K006" in [d.code for d in result.diagnostics] else []
    if profiles:
        result = check_text(text, profiles=profiles)
    text, _, failed = migrate_text(text, result.diagnostics)
    assert not failed
    result = check_text(text, profiles=profiles)
    repeated = {d.line for d in result.diagnostics if d.code == "GRPO-Y014"}
    lines = text.splitlines(keepends=True)
    errors = {d.code for d in result.diagnostics if d.severity == "error"}
    return "".join(line for n, line in enumerate(lines, 1) if n not in repeated), profiles, errors & SCHEMA_CODES


@pytest.fixture(scope="module")
def migrated(shared_dir, tmp_path_factory) -> dict[tuple[str, ...], list[tuple[Path, set[str]]]]:
    """profiles -> [(migrated file, the schema-expressible error codes grpo validate reports for it)]."""
    folder = tmp_path_factory.mktemp("migrated")
    out: dict[tuple[str, ...], list[tuple[Path, set[str]]]] = {(): [], ("open-r1",): []}
    for path in corpus_files("valid"):
        text, profiles, errors = migrate(path.read_text(encoding="utf-8"))
        (folder / path.name).write_text(text, encoding="utf-8")
        out[tuple(profiles)].append((folder / path.name, errors))
    return out


def test_lenient_schema_accepts_every_migrated_valid_file(migrated):
    files = [path for group in migrated.values() for path, _ in group]
    assert len(files) == len(corpus_files("valid")) == 61
    assert refused(check_json(LENIENT, files)) == {}


def test_strict_schema_agrees_with_grpo_validate_on_migrated_valid_files(migrated):
    rejected: set[str] = set()
    for profiles, group in migrated.items():
        refused_here = set(refused(check_json(STRICT[profiles], [path for path, _ in group])))
        assert refused_here == {path.name for path, codes in group if codes}, profiles
        rejected |= refused_here
    assert {name[:2] for name in rejected} == set(FORKS)


def test_the_invalid_corpus_is_fully_classified(shared_dir):
    names = {path.name for path in corpus_files("invalid")}
    assert names == set(EXPRESSIBLE) | set(NOT_EXPRESSIBLE) | set(NOT_PARSED)


def test_strict_schema_refuses_structural_mistakes_at_the_right_key(shared_dir):
    report = refused(check_json(STRICT[()], [CORPUS / "invalid" / name for name in EXPRESSIBLE]))
    for name, (path, reason) in EXPRESSIBLE.items():
        found = report.get(name, [])
        assert any(p == path or p.startswith(path + ".") for p in found), (name, reason, found)


def test_strict_schema_accepts_what_only_python_can_refuse(shared_dir):
    tabs = "40_malformed_yaml_tabs.yaml"
    report = check_json(STRICT[()], [CORPUS / "invalid" / name for name in [*NOT_EXPRESSIBLE, tabs]])
    assert refused(report) == {tabs: ["<parse>"]}


def test_committed_schemas_pass_check_metaschema():
    result = run_check_jsonschema("--check-metaschema", *map(str, sorted(SCHEMAS.glob("grpo-config*.json"))))
    assert result.returncode == 0, result.stdout + result.stderr
