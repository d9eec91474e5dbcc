"""Configs written elsewhere: each case is a minimal reproduction of a miss or a false error against TRL 1.16.

Every case starts from the same three keys a `trl grpo` config needs (BASE). The comments say what TRL 1.16 does
with the file; the assertions say what `grpo validate` must report.
"""

from __future__ import annotations

import pytest

from grpo_schema.engine.closematch import changes_meaning, suggest
from grpo_schema.engine.codes import CODES
from grpo_schema.engine.keys import accepted_keys, did_you_mean
from grpo_schema.engine.migrations import MIGRATIONS, describe
from grpo_schema.engine.overrides import parse_trl_args
from tests.schema.helpers import check, codes, only

BASE = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"


def errors(result) -> list[str]:
    return codes(result, "error")


# 1. Only real YAML booleans are the legacy spelling; TRL keeps strings as they are.


@pytest.mark.parametrize("text", ['"False"', '"True"', '"no"', "'false'", '"1"'])
def test_quoted_boolean_scale_rewards_is_refused(text):
    # TRL types scale_rewards `str`: the string reaches the trainer and fails at the first step.
    result = check(BASE + f"scale_rewards: {text}\n")
    diag = only(result, "GRPO-T010")
    assert diag.severity == "error" and diag.line == 4 and diag.fields == ("scale_rewards",)
    assert diag.fix is not None and diag.fix.set["scale_rewards"] in ("group", "none")


@pytest.mark.parametrize("text, meaning", [("false", "none"), ("true", "group"), ("no", "none"), ("batch", "batch")])
def test_real_booleans_and_modes_stay_valid(text, meaning):
    result = check(BASE + f"scale_rewards: {text}\n")
    assert result.valid and result.config.scale_rewards == meaning


def test_scale_rewards_on_trls_command_line_stays_a_string():
    paths, overrides = parse_trl_args(["--config", "c.yaml", "--scale_rewards", "False"])
    result = check(BASE, overrides=overrides)
    diag = only(result, "GRPO-T010")
    assert diag.origin == "cli" and not result.valid


def test_every_str_bool_union_is_audited():
    # resume_from_checkpoint: a quoted "false" is a checkpoint directory named 'false' to transformers.
    assert errors(check(BASE + 'resume_from_checkpoint: "false"\n')) == ["GRPO-T010"]
    assert check(BASE + "resume_from_checkpoint: false\n").valid
    assert check(BASE + "resume_from_checkpoint: runs/checkpoint-500\n").valid
    # include_num_input_tokens_seen: `trl grpo` parses it as a boolean option. A quoted "False" becomes false
    # there but means 'all' to transformers itself: a warning with the unquoted fix.
    quoted = check(BASE + 'include_num_input_tokens_seen: "False"\n')
    warning = only(quoted, "GRPO-T011")
    assert quoted.valid and warning.fix.set == {"include_num_input_tokens_seen": False}
    assert quoted.config.include_num_input_tokens_seen is False
    # ... and its names fail that parser ("Truthy value expected") before anything starts.
    for name in ("all", "non_padding"):
        assert errors(check(BASE + f"include_num_input_tokens_seen: {name}\n")) == ["GRPO-T012"]
    assert check(BASE + "include_num_input_tokens_seen: true\n").valid
    # fsdp: a quoted "False" is an unknown option string to transformers.
    assert errors(check(BASE + 'fsdp: "False"\n')) == ["GRPO-T010"]
    # liger_kernel_config: TRL hands the mapping on as written; the string 'false' is true to whoever tests it.
    quoted = check(BASE + 'liger_kernel_config: {fused_linear_cross_entropy: "false"}\n')
    assert errors(quoted) == ["GRPO-T010"]
    assert only(quoted, "GRPO-T010").fix.set == {"liger_kernel_config": {"fused_linear_cross_entropy": False}}
    assert check(BASE + "liger_kernel_config: {rope: false}\n").valid


# 2. `trl grpo` refuses a config without a reward source or a dataset.


def test_missing_reward_source_is_an_error():
    result = check("model_name_or_path: m\ndataset_name: d\n")
    assert errors(result) == ["GRPO-R004"]
    assert check("model_name_or_path: m\ndataset_name: d\nreward_model_name_or_path: rm\n").valid


@pytest.mark.parametrize("text", ["", "datasets: []\n"])
def test_missing_dataset_is_an_error(text):
    result = check("model_name_or_path: m\nreward_funcs: [accuracy_reward]\n" + text)
    assert errors(result) == ["GRPO-S002"]
    if text:
        assert "empty list" in only(result, "GRPO-S002").message and only(result, "GRPO-S002").line == 3


def test_grpo_config_fragment_is_not_refused_for_what_a_script_passes():
    # No model either: GRPOConfig arguments for a Python script, which passes model, data and rewards itself.
    result = check("loss_type: dapo\nbeta: 0.0\n")
    assert result.valid and codes(result) == ["GRPO-S006"]
    assert "dataset_name" in only(result, "GRPO-S006").message and "reward_funcs" in only(result, "GRPO-S006").message


def test_open_r1_files_take_open_r1_default_rewards():
    text = "model_name_or_path: m\ndataset_name: d\nsystem_prompt: hi\n"
    assert "GRPO-R004" not in codes(check(text))  # written for open-r1, whose script defaults its rewards
    assert "GRPO-R004" not in codes(check(text, profiles=["open-r1"]))


# 3. GRPOTrainer refuses a LoRA adapter on lm_head.


@pytest.mark.parametrize("targets", ["[q_proj, lm_head]", "[model.lm_head]", "'.*(q_proj|lm_head)'"])
def test_lora_on_lm_head_is_refused(targets):
    result = check(BASE + f"use_peft: true\nlora_target_modules: {targets}\n")
    assert errors(result) == ["GRPO-M007"]


@pytest.mark.parametrize(
    "text",
    [
        "use_peft: true\nlora_target_modules: all-linear\n",
        "use_peft: true\nlora_target_modules: [q_proj]\nlora_modules_to_save: [lm_head]\n",
        "lora_target_modules: [lm_head]\n",
    ],
)
def test_lora_without_lm_head_adapter_passes(text):
    assert "GRPO-M007" not in codes(check(BASE + text))


# 4. A streamed mixture has no train_test_split.


def test_streamed_mixture_cannot_hold_out_a_test_split():
    text = (
        "model_name_or_path: m\nreward_funcs: [accuracy_reward]\ndatasets:\n  - path: a\n  - path: b\n"
        "streaming: true\nmax_steps: 100\ntest_split_size: 0.1\n"
    )
    assert errors(check(text)) == ["GRPO-S007"]
    assert check(text.replace("streaming: true", "streaming: false")).valid


# 5. datasets refuses loading scripts.


@pytest.mark.parametrize("text", ["dataset_name: ./gsm8k.py\n", "datasets: [{path: data/loader.py}]\n"])
def test_dataset_loading_scripts_are_refused(text):
    result = check("model_name_or_path: m\nreward_funcs: [accuracy_reward]\n" + text)
    assert errors(result) == ["GRPO-S008"] and only(result, "GRPO-S008").line == 3


# 6. A server-era vLLM recipe now colocates.


def test_server_era_recipe_warns_after_migration():
    recipe = BASE + "use_vllm: true\nvllm_device: auto\nvllm_gpu_memory_utilization: 0.7\nnum_processes: 7\n"
    before = check(recipe)
    assert "GRPO-V006" in codes(before) and "GRPO-K003" in codes(before)
    migrated = check(recipe.replace("vllm_device: auto\n", ""))  # what `grpo migrate` leaves
    diag = only(migrated, "GRPO-V006")
    assert migrated.valid and diag.severity == "warning" and "7 training processes" in diag.message
    assert "GRPO-V006" not in codes(check(recipe.replace("use_vllm: true", "use_vllm: true\nvllm_mode: server")))
    assert "GRPO-V006" not in codes(check(BASE + "use_vllm: true\n", world_size=7))  # a process count alone


# 7. Cross-field rules see the value a migration would give.


def test_rules_see_values_under_renamed_keys():
    result = check(BASE + "use_vllm: true\nvllm_max_model_len: 2048\nmax_completion_length: 2048\n")
    v003 = only(result, "GRPO-V003")
    assert v003.fields[0] == "vllm_max_model_len" and v003.line == 5
    geometry = check(BASE + "per_gpu_train_batch_size: 6\nnum_generations: 8\n")
    assert {"GRPO-K002", "GRPO-B001"} <= set(codes(geometry))
    evaluation = check(
        BASE + "evaluation_strategy: steps\nper_device_eval_batch_size: 6\nnum_generations: 8\n"
        "per_device_train_batch_size: 8\n"
    )
    assert "GRPO-B004" in codes(evaluation)
    assert geometry.config.per_device_train_batch_size == 8  # what TRL 1.16 reads today is still reported as is
    assert geometry.migrated.per_device_train_batch_size == 6


def test_rules_see_values_of_removed_keys_with_a_successor():
    result = check(BASE + "no_cuda: true\nfp16: true\n")  # migrates to use_cpu: true, where fp16 is refused
    assert "GRPO-P003" in codes(result)


# 8. A profile must not hide a dead key.


def test_profile_key_that_nothing_reads_is_reported():
    result = check(BASE + "wandb_log_unique_prompts: true\n", profiles=["open-r1"])
    diag = only(result, "GRPO-K008")
    assert diag.severity == "warning" and "log_unique_prompts" in diag.hint
    assert diag.fix.rename == {"wandb_log_unique_prompts": "log_unique_prompts"}
    assert only(check(BASE + "wandb_log_unique_prompts: true\n"), "GRPO-K002").severity == "error"
    from grpo_schema.commands.migrate import migrate_text

    text = BASE + "wandb_log_unique_prompts: false\n"
    migrated, done, failed = migrate_text(text, check(text, profiles=["open-r1"]).diagnostics)
    assert "log_unique_prompts: false" in migrated and "wandb_" not in migrated and not failed


# 9. lr_scheduler_kwargs with the constant schedules are dropped, not refused.


@pytest.mark.parametrize("schedule", ["constant", "constant_with_warmup"])
def test_constant_schedules_ignore_kwargs(schedule):
    result = check(BASE + f"lr_scheduler_type: {schedule}\nlr_scheduler_kwargs: {{num_cycles: 0.5}}\n")
    assert result.valid and "ignored" in only(result, "GRPO-O010").message


def test_other_schedules_still_refuse_unknown_kwargs():
    assert errors(check(BASE + "lr_scheduler_type: cosine\nlr_scheduler_kwargs: {foo: 1}\n")) == ["GRPO-O006"]


# 10. max_steps overrides num_train_epochs.


@pytest.mark.parametrize("epochs", [-1, 0])
def test_epochs_range_applies_only_without_max_steps(epochs):
    assert check(BASE + f"num_train_epochs: {epochs}\nmax_steps: 100\n").valid
    assert errors(check(BASE + f"num_train_epochs: {epochs}\n")) == ["GRPO-B008"]


# 11. env values: TRL sets str(value).


def test_env_numbers_and_booleans_pass():
    result = check(BASE + "env:\n  VLLM_DISABLE_COMPILE_CACHE: 1\n  TOKENIZERS_PARALLELISM: false\n")
    assert result.valid and result.env == {"VLLM_DISABLE_COMPILE_CACHE": "1", "TOKENIZERS_PARALLELISM": "False"}
    assert errors(check(BASE + "env:\n  HF_HOME: null\n")) == ["GRPO-E002"]


# 12. Same situation, same severity; R-diagnostics at the list item.


def test_unknown_reward_severity_does_not_depend_on_other_keys():
    plain = BASE.replace("[accuracy_reward]", "[accuracy_reward, my_reward]")
    with_unknown_key = plain + "some_script_option: 1\n"
    assert only(check(plain), "GRPO-R002").severity == "error"
    assert only(check(with_unknown_key), "GRPO-R002").severity == "error"
    assert "GRPO-R007" not in codes(check(with_unknown_key))
    # A name another project registers is refused by `trl grpo` too, with or without that project's keys.
    project = BASE.replace("[accuracy_reward]", "[accuracy_reward, format]")
    assert only(check(project), "GRPO-R007").severity == "error"
    assert only(check(project + "system_prompt: hi\n"), "GRPO-R007").severity == "error"
    assert "GRPO-R007" not in codes(check(project, profiles=["open-r1"]))


def test_reward_diagnostics_point_at_the_item():
    text = (
        "model_name_or_path: m\ndataset_name: d\nreward_funcs:\n  - accuracy_reward\n  - my_reward\n"
        "  - bad..path\n  - accuracy_reward\n"
    )
    result = check(text)
    assert only(result, "GRPO-R002").line == 5
    assert only(result, "GRPO-R003").line == 6
    assert only(result, "GRPO-R006").line == 7
    assert "reward_funcs" in only(result, "GRPO-R002").fields


# 13. Version claims and the K002 safe fix.


def test_rename_history_matches_the_release_tags():
    assert "TRL 0.23" in describe(MIGRATIONS["torch_dtype"]) and "0.27" in describe(MIGRATIONS["torch_dtype"])
    assert "0.18" in describe(MIGRATIONS["vllm_max_model_len"]) and "0.26" in describe(MIGRATIONS["vllm_max_model_len"])
    assert "4.41" in describe(MIGRATIONS["evaluation_strategy"]) and "4.51" in describe(
        MIGRATIONS["evaluation_strategy"]
    )
    assert "5.15" in describe(MIGRATIONS["warmup_ratio"])


def test_safe_rename_fix_never_writes_a_refused_value():
    bad = only(check(BASE + "torch_dtype: bf16\n"), "GRPO-K002")
    assert not bad.fix.safe and bad.fix.set == {"dtype": "bfloat16"} and "dtype: bfloat16" in bad.hint
    odd = only(check(BASE + "torch_dtype: int3\n"), "GRPO-K002")
    assert not odd.fix.safe and "correct the value" in odd.hint
    good = only(check(BASE + "torch_dtype: bfloat16\n"), "GRPO-K002")
    assert good.fix.safe and good.fix.rename == {"torch_dtype": "dtype"}


# 14. Did-you-mean prefers the same meaning and never changes it.


@pytest.mark.parametrize(
    "typo, meant",
    [
        ("num_eval_generations", "num_generations_eval"),
        ("dataset_split", "dataset_train_split"),
        ("per_device_batch_size", "per_device_train_batch_size"),
        ("lora_rank", "lora_r"),
        ("lerning_rate", "learning_rate"),
        ("use_vlm", "use_vllm"),
        ("evl_strategy", "eval_strategy"),
    ],
)
def test_did_you_mean_prefers_the_same_meaning(typo, meant):
    assert did_you_mean(typo, accepted_keys(())) == meant
    assert only(check(BASE + f"{typo}: 1\n"), "GRPO-K001").fix.rename == {typo: meant}


@pytest.mark.parametrize("typo", ["eval_temperature", "eval_top_p"])
def test_did_you_mean_never_changes_training_semantics(typo):
    assert did_you_mean(typo, accepted_keys(())) is None
    assert only(check(BASE + f"{typo}: 0.5\n"), "GRPO-K001").fix is None


def test_meaning_changes_are_denied_by_word_not_by_example():
    assert changes_meaning("vllm_importance_sampling_clip_mn", "vllm_importance_sampling_clip_max") is False
    assert changes_meaning("entropy_coef_minimum", "entropy_coef_max")  # min/max are opposites
    assert changes_meaning("sapo_temperature_pos_", "sapo_temperature_neg")
    assert changes_meaning("per_device_test_batch_size", "per_device_train_batch_size")
    assert suggest("load_in_4bits", frozenset({"load_in_4bit", "load_in_8bit"})) == "load_in_4bit"


# 15. Wording.


def test_b001_world_sizes_are_their_own_sentence():
    diag = only(check(BASE + "per_device_train_batch_size: 6\nnum_generations: 8\n"), "GRPO-B001")
    assert "smallest edits:" in diag.hint and ". As written, the config is valid for world sizes 4, 8" in diag.hint
    assert "(valid for" not in diag.hint


def test_v002_names_the_default_mode():
    diag = only(check(BASE + "use_vllm: true\nvllm_server_port: 8001\n"), "GRPO-V002")
    assert "TRL 1.16's default" in diag.message and "vllm_mode: server" in diag.hint
    explicit = only(check(BASE + "use_vllm: true\nvllm_mode: colocate\nvllm_server_port: 8001\n"), "GRPO-V002")
    assert "default" not in explicit.message


def test_lists_of_settings_agree_in_number():
    assert "lora_r has no effect" in only(check(BASE + "lora_r: 8\n"), "GRPO-M003").message
    assert "lora_r, lora_alpha have no effect" in only(check(BASE + "lora_r: 8\nlora_alpha: 16\n"), "GRPO-M003").message


def test_removal_fixes_are_titled_remove():
    fix = only(check(BASE + "overwrite_output_dir: true\n"), "GRPO-K003").fix
    assert fix.title == "remove overwrite_output_dir" and fix.unset == ("overwrite_output_dir",)
    assert not any("nothing" in (d.fix.title if d.fix else "") for d in check(BASE + "use_ipex: true\n").diagnostics)


def test_new_codes_are_documented():
    for code in (
        "GRPO-T010",
        "GRPO-T011",
        "GRPO-T012",
        "GRPO-K008",
        "GRPO-B008",
        "GRPO-M007",
        "GRPO-O010",
        "GRPO-S007",
        "GRPO-S008",
        "GRPO-V006",
    ):
        check(BASE)  # loads the rules
        assert code in CODES and CODES[code].explanation
