"""Every cross-field rule: fires on a minimal bad config, stays quiet once the config is fixed."""

from __future__ import annotations

import pytest

from grpo_schema.engine.codes import CODES
from grpo_schema.engine.rules import load_rules
from tests.schema.helpers import check, codes

BASE = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"

# code -> (bad config, fixed config, options). BASE is prepended to both unless the text starts with '!'.
CASES = {
    "GRPO-B001": (
        "per_device_train_batch_size: 6\nnum_generations: 8",
        "per_device_train_batch_size: 8\nnum_generations: 8",
        {},
    ),
    "GRPO-B002": ("generation_batch_size: 16\nsteps_per_generation: 2", "generation_batch_size: 16", {}),
    "GRPO-B003": ("generation_batch_size: 20\nnum_generations: 4", "generation_batch_size: 24\nnum_generations: 4", {}),
    "GRPO-B004": (
        "eval_strategy: steps\nper_device_eval_batch_size: 6",
        "eval_strategy: steps\nper_device_eval_batch_size: 8",
        {},
    ),
    "GRPO-B005": ("auto_find_batch_size: true", "auto_find_batch_size: false", {}),
    "GRPO-B006": ("epsilon: 0.3", "epsilon: 0.3\nnum_iterations: 2", {}),
    "GRPO-B007": ("max_steps: 10\nnum_train_epochs: 2", "max_steps: 10", {}),
    "GRPO-G001": ("generation_kwargs: {temperature: 0.5}", "temperature: 0.5", {}),
    "GRPO-G002": ("use_vllm: true\nuse_transformers_continuous_batching: true", "use_vllm: true", {}),
    "GRPO-G003": ("use_vllm: true\ncache_implementation: static", "cache_implementation: static", {}),
    "GRPO-L001": ("epsilon_high: 0.1", "epsilon_high: 0.28", {}),
    "GRPO-L002": ("loss_type: luspo", "loss_type: luspo\nimportance_sampling_level: sequence", {}),
    "GRPO-L003": ("loss_type: dr_grpo\nmax_completion_length: null", "loss_type: dr_grpo", {}),
    "GRPO-L004": ("loss_type: cispo", "loss_type: cispo\nepsilon_high: 5.0", {}),
    "GRPO-L005": ("delta: 1.1", "delta: 4.0", {}),
    "GRPO-L006": (
        "use_adaptive_entropy: true\nentropy_coef_min: 0.5\nentropy_coef_max: 0.1",
        "use_adaptive_entropy: true",
        {},
    ),
    "GRPO-L007": ("sync_ref_model: true", "sync_ref_model: true\nbeta: 0.04", {}),
    "GRPO-L008": ("sync_ref_model: true\nbeta: 0.04\nuse_peft: true", "sync_ref_model: true\nbeta: 0.04", {}),
    "GRPO-L009": ("ref_model_sync_steps: 64", "ref_model_sync_steps: 64\nbeta: 0.04", {}),
    "GRPO-I001": ("vllm_importance_sampling_clip_min: 3.0", "vllm_importance_sampling_clip_min: 0.5", {}),
    "GRPO-I002": (
        "vllm_importance_sampling_mode: token_truncate\nvllm_importance_sampling_clip_max: null",
        "vllm_importance_sampling_mode: token_truncate",
        {},
    ),
    "GRPO-I003": (
        "loss_type: vespo\nuse_vllm: true",
        "loss_type: vespo\nuse_vllm: true\nvllm_importance_sampling_mode: token_mask",
        {},
    ),
    "GRPO-I004": (
        "vllm_importance_sampling_mode: token_mask",
        "use_vllm: true\nvllm_importance_sampling_mode: token_mask",
        {},
    ),
    "GRPO-V001": (
        "use_vllm: true\nvllm_tensor_parallel_size: 2",
        "use_vllm: true\nvllm_tensor_parallel_size: 2",
        {"world_size": 3, "fixed_world_size": 4},
    ),
    "GRPO-V002": (
        "use_vllm: true\nvllm_server_port: 8001",
        "use_vllm: true\nvllm_mode: server\nvllm_server_port: 8001",
        {},
    ),
    "GRPO-V003": ("use_vllm: true\nvllm_max_model_length: 512", "use_vllm: true\nvllm_max_model_length: 4096", {}),
    "GRPO-V004": ("use_vllm: true\nds3_gather_for_generation: false", "use_vllm: true", {}),
    "GRPO-V005": ("vllm_mode: server", "use_vllm: true\nvllm_mode: server", {}),
    "GRPO-R001": ("reward_weights: [1.0, 0.5]", "reward_weights: [1.0]", {}),
    "GRPO-R002": (
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [format_reward]",
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [think_format_reward]",
        {},
    ),
    "GRPO-R003": (
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [my..reward]",
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [my.reward]",
        {},
    ),
    "GRPO-R004": (
        "!model_name_or_path: m\ndataset_name: d",
        "!model_name_or_path: m\ndataset_name: d\nreward_model_name_or_path: rm",
        {},
    ),
    "GRPO-R005": (
        "multi_objective_aggregation: normalize_then_sum\nscale_rewards: batch",
        "multi_objective_aggregation: normalize_then_sum",
        {},
    ),
    "GRPO-R006": (
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward, accuracy_reward]",
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]",
        {},
    ),
    "GRPO-R007": (
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy, format]",
        "!model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy, format]",
        {"fixed_profiles": ["open-r1"]},
    ),
    "GRPO-P001": ("fp16: true\nbf16: true", "fp16: true", {}),
    "GRPO-P002": ("fp16_full_eval: true\nbf16_full_eval: true", "bf16_full_eval: true", {}),
    "GRPO-P003": ("use_cpu: true\nfp16: true", "use_cpu: true\nbf16: false", {}),
    "GRPO-M001": ("load_in_8bit: true\nload_in_4bit: true\nuse_peft: true", "load_in_4bit: true\nuse_peft: true", {}),
    "GRPO-M002": ("load_in_4bit: true", "load_in_4bit: true\nuse_peft: true", {}),
    "GRPO-M003": ("lora_r: 8", "lora_r: 8\nuse_peft: true", {}),
    "GRPO-M004": (
        "load_in_4bit: true\nuse_peft: true\nmodel_init_kwargs: {quantization_config: {}}",
        "load_in_4bit: true\nuse_peft: true",
        {},
    ),
    "GRPO-M005": ("router_aux_loss_coef: 0.001", "router_aux_loss_coef: null", {}),
    "GRPO-M006": (
        "liger_kernel_config: {fused_linear_cross_entropy: true}",
        "liger_kernel_config: {fused_linear_cross_entropy: false}",
        {},
    ),
    "GRPO-O001": (
        "log_completions_hub_repo: me/completions",
        "log_completions_hub_repo: me/completions\nlog_completions: true",
        {},
    ),
    "GRPO-O002": ("logging_steps: 2.5", "logging_steps: 2", {}),
    "GRPO-O003": (
        "load_best_model_at_end: true\nmetric_for_best_model: reward",
        "load_best_model_at_end: true\nmetric_for_best_model: reward\neval_strategy: steps\n"
        "eval_steps: 100\nsave_steps: 500",
        {},
    ),
    "GRPO-O004": ("save_strategy: best", "save_strategy: best\nmetric_for_best_model: eval_reward", {}),
    "GRPO-O005": ("lr_scheduler_type: reduce_lr_on_plateau", "lr_scheduler_type: cosine", {}),
    "GRPO-O006": (
        "lr_scheduler_type: cosine_with_min_lr",
        "lr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs: {min_lr_rate: 0.1}",
        {},
    ),
    "GRPO-O007": ("dataloader_prefetch_factor: 2", "dataloader_prefetch_factor: 2\ndataloader_num_workers: 2", {}),
    "GRPO-O008": ("hub_token: hf_abc", "push_to_hub: true", {}),
    "GRPO-O009": (
        "eval_strategy: steps\nlogging_steps: 0\nlogging_strategy: epoch",
        "eval_strategy: steps\neval_steps: 50\nlogging_steps: 0\nlogging_strategy: epoch",
        {},
    ),
    "GRPO-S001": (
        "datasets: [{path: x}]",
        "!model_name_or_path: m\nreward_funcs: [accuracy_reward]\ndatasets: [{path: x}]",
        {},
    ),
    "GRPO-S002": ("!model_name_or_path: m\nreward_funcs: [accuracy_reward]", BASE, {}),
    "GRPO-S003": (
        "datasets: [{path: x, fraction: 0.5}, {path: y}]",
        "datasets: [{path: x, fraction: 0.5}, {path: y, fraction: 0.5}]",
        {},
    ),
    "GRPO-S004": ("dataset_streaming: true", "dataset_streaming: true\nmax_steps: 100", {}),
    "GRPO-S005": (
        "datasets: [{path: x}]\neval_strategy: epoch",
        "datasets: [{path: x}]\neval_strategy: epoch\ntest_split_size: 0.05",
        {},
    ),
    "GRPO-S006": ("!dataset_name: d\nreward_funcs: [accuracy_reward]", BASE, {}),
    "GRPO-S101": (
        "!reward_funcs: [accuracy]\nmodel_name_or_path: m",
        "!reward_funcs: [accuracy]\nmodel_name_or_path: m\ndataset_name: d",
        {"profiles": ["open-r1"]},
    ),
    "GRPO-S102": (
        "dataset_mixture: {datasets: [{id: a, columns: [x]}, {id: b, columns: [y]}]}",
        "dataset_mixture: {datasets: [{id: a, columns: [x]}, {id: b, columns: [x]}]}",
        {"profiles": ["open-r1"]},
    ),
    "GRPO-W001": ("fsdp: true\ndeepspeed: ds.json", "deepspeed: ds.json", {"world_size": 2}),
    "GRPO-W002": ("fsdp: full_shard", "fsdp: full_shard", {"fixed_world_size": 2}),
    "GRPO-W003": ("parallelism_config: {cp_size: 2}", "", {}),
    "GRPO-W004": ("accelerator_config: {split_batch: true}", "accelerator_config: {split_batches: true}", {}),
    "GRPO-W005": ("accelerate_config: zero9", "accelerate_config: zero3", {}),
    "GRPO-W006": ("num_processes: 8", "num_processes: 8", {"world_size": 4, "fixed_world_size": 8}),
    "GRPO-D001": ("vllm_importance_sampling_cap: 2.0", "vllm_importance_sampling_clip_max: 2.0", {}),
    "GRPO-D002": ("use_transformers_paged: true", "use_transformers_continuous_batching: true", {}),
    "GRPO-D003": ("use_liger_kernel: true", "model_init_kwargs: {use_kernels: true}", {}),
    "GRPO-D004": ("gradient_checkpointing: true", "activation_checkpointing: true", {}),
    "GRPO-D005": ("local_rank: 0", "", {}),
    "GRPO-B008": ("num_train_epochs: 0", "num_train_epochs: 0\nmax_steps: 10", {}),
    "GRPO-M007": (
        "use_peft: true\nlora_target_modules: [q_proj, lm_head]",
        "use_peft: true\nlora_target_modules: [q_proj]\nlora_modules_to_save: [lm_head]",
        {},
    ),
    "GRPO-O010": (
        "lr_scheduler_type: constant\nlr_scheduler_kwargs: {num_cycles: 0.5}",
        "lr_scheduler_type: constant",
        {},
    ),
    "GRPO-S007": (
        "!model_name_or_path: m\nreward_funcs: [accuracy_reward]\ndatasets: [{path: x}]\nstreaming: true\n"
        "max_steps: 10\ntest_split_size: 0.1",
        "!model_name_or_path: m\nreward_funcs: [accuracy_reward]\n"
        "datasets: [{path: x}]\nstreaming: true\nmax_steps: 10",
        {},
    ),
    "GRPO-S008": ("!model_name_or_path: m\nreward_funcs: [accuracy_reward]\ndataset_name: ./gsm8k.py", BASE, {}),
    "GRPO-V006": (
        "use_vllm: true\nvllm_gpu_memory_utilization: 0.7",
        "use_vllm: true\nvllm_gpu_memory_utilization: 0.3",
        {},
    ),
}


def _text(body: str) -> str:
    return body[1:] + "\n" if body.startswith("!") else BASE + body + "\n"


def _options(options: dict, fixed: bool) -> dict:
    out = {}
    world = options.get("fixed_world_size" if fixed else "world_size", options.get("world_size"))
    if world:
        out["world_size"] = world
    profiles = options.get("fixed_profiles" if fixed else "profiles", options.get("profiles"))
    if profiles:
        out["profiles"] = profiles
    return out


def test_every_rule_has_a_case():
    rule_codes = {r.code for r in load_rules()} | {"GRPO-S101", "GRPO-S102"}
    assert rule_codes == set(CASES), f"missing {rule_codes - set(CASES)}, extra {set(CASES) - rule_codes}"


def test_every_code_is_documented_and_unique():
    load_rules()
    for code, info in CODES.items():
        assert code.startswith("GRPO-") and len(code) == 9, code
        assert info.title and info.explanation, code
    names = [r.name for r in load_rules()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fires_on_bad_config_and_not_on_fixed(code):
    bad, good, options = CASES[code]
    result = check(_text(bad), **_options(options, fixed=False))
    fired = [d for d in result.diagnostics if d.code == code]
    assert fired, f"{code} did not fire: {[d.to_dict() for d in result.diagnostics]}"
    diag = fired[0]
    assert diag.fields and diag.message, diag.to_dict()
    written = [f for f in diag.fields if f.split(".")[0].split("[")[0] + ":" in _text(bad)]
    assert (diag.line is not None) == bool(written), diag.to_dict()  # null only when no key is in the file
    assert diag.severity == CODES[code].severity
    fixed = check(_text(good), **_options(options, fixed=True))
    assert code not in codes(fixed), [d.to_dict() for d in fixed.diagnostics if d.code == code]


def test_a_rule_reading_a_failed_field_is_skipped_not_crashed():
    result = check(BASE + "num_generations: lots\nper_device_train_batch_size: 6\n")
    assert "GRPO-T001" in codes(result) and "GRPO-B001" not in codes(result)


def test_batch_hint_lists_valid_world_sizes():
    result = check(BASE + "per_device_train_batch_size: 2\nnum_generations: 14\ngradient_accumulation_steps: 4\n")
    diag = next(d for d in result.diagnostics if d.code == "GRPO-B001")
    assert "valid for world sizes 7, 14, 21" in diag.hint


def test_tokens_in_model_init_kwargs_are_flagged():
    result = check(BASE + "model_init_kwargs: {token: hf_abc, dtype: bfloat16}\n")
    diag = next(d for d in result.diagnostics if d.code == "GRPO-O008")
    assert diag.fields == ("model_init_kwargs",) and diag.line == 4 and "token" in diag.message


def test_world_size_comes_from_num_processes_unless_given():
    text = (
        BASE + "per_device_train_batch_size: 2\nnum_generations: 14\ngradient_accumulation_steps: 4\nnum_processes: 7\n"
    )
    assert check(text).world_size == 7 and check(text).valid
    assert not check(text, world_size=8).valid
