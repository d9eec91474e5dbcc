"""Keys that TRL 1.16 / transformers 5.23 no longer read, in one table: what happened and what to write instead.

Real configs still carry them (open-r1 recipes use torch_dtype, max_prompt_length, warmup_ratio,
overwrite_output_dir, vllm_device, ...). `grpo validate` reports each with its own code; `grpo migrate` and
`grpo validate --fix` apply the edit in `rewrite`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

Rewrite = Callable[[Any, dict[str, Any]], dict[str, Any]]


def _to(new_key: str) -> Rewrite:
    """Move the value to `new_key` unless the config already sets that key (then the old key just goes)."""
    return lambda value, config: {} if new_key in config else {new_key: value}


def _drop(value: Any, config: dict[str, Any]) -> dict[str, Any]:
    return {}


def _warmup_ratio(value: Any, config: dict[str, Any]) -> dict[str, Any]:
    # transformers 5 reads a warmup_steps value below 1 as a ratio, so the number carries over unchanged; an
    # explicit non-zero warmup_steps already won over the ratio in transformers 4.
    if config.get("warmup_steps") not in (None, 0):
        return {}
    return {"warmup_steps": value}


def _include_inputs(value: Any, config: dict[str, Any]) -> dict[str, Any]:
    return {"include_for_metrics": ["inputs"]} if value is True and "include_for_metrics" not in config else {}


def _no_cuda(value: Any, config: dict[str, Any]) -> dict[str, Any]:
    return {"use_cpu": value} if "use_cpu" not in config else {}


@dataclass(frozen=True)
class Migration:
    key: str
    kind: Literal["renamed", "removed"]
    origin: str  # "TRL" or "transformers"
    since: str
    note: str
    rewrite: Rewrite
    replacement: str | None = None
    safe: bool = True
    # The sentence for the diagnostic, where "renamed X in V" would not tell the history right.
    history: str = ""


def _renamed(key: str, new: str, origin: str, since: str, note: str = "", history: str = "") -> Migration:
    return Migration(key, "renamed", origin, since, note or f"renamed {new}", _to(new), new, history=history)


def _removed(
    key: str,
    origin: str,
    since: str,
    note: str,
    rewrite: Rewrite = _drop,
    replacement: str | None = None,
    safe: bool = True,
) -> Migration:
    return Migration(key, "removed", origin, since, note, rewrite, replacement, safe)


_TA = "a TrainingArguments field of transformers 4.x that transformers 5 no longer has"

MIGRATIONS: dict[str, Migration] = {
    m.key: m
    for m in (
        # Versions checked against the TRL release tags (trl/trainer/model_config.py, grpo_config.py) and the
        # transformers wheels on PyPI (training_args.py): "renamed in A (old name removed in B)" means the new name is
        # first in release A and the old one last in the release before B.
        _renamed("torch_dtype", "dtype", "TRL", "0.23 (the old name stayed, deprecated, until its removal in 0.27)"),
        _renamed("wandb_log_unique_prompts", "log_unique_prompts", "TRL", "0.26 (old name removed in 0.27)"),
        _renamed(
            "vllm_max_model_len",
            "vllm_max_model_length",
            "TRL",
            "0.26",
            history="vllm_max_model_len was removed in TRL 0.18 (with the move to server and colocate modes); "
            "TRL 0.26 brought the setting back as vllm_max_model_length, and the old name is not read",
        ),
        _renamed(
            "vllm_guided_decoding_regex", "vllm_structured_outputs_regex", "TRL", "0.27 (old name removed in 0.28)"
        ),
        _renamed("evaluation_strategy", "eval_strategy", "transformers", "4.41 (old name removed in 4.51)"),
        _renamed(
            "per_gpu_train_batch_size", "per_device_train_batch_size", "transformers", "2.11 (old name removed in 5.0)"
        ),
        _renamed(
            "per_gpu_eval_batch_size", "per_device_eval_batch_size", "transformers", "2.11 (old name removed in 5.0)"
        ),
        _renamed("push_to_hub_model_id", "hub_model_id", "transformers", "4.11 (old name removed in 5.0)"),
        _renamed("push_to_hub_token", "hub_token", "transformers", "4.11 (old name removed in 5.0)"),
        _removed(
            "max_prompt_length",
            "TRL",
            "0.28",
            "GRPOConfig no longer truncates prompts; filter or truncate long prompts in the dataset instead",
        ),
        _removed(
            "warmup_ratio",
            "transformers",
            "5.15 (deprecated since 5.0)",
            "use warmup_steps, which reads a value below 1 as a fraction of the total steps",
            _warmup_ratio,
            "warmup_steps",
        ),
        _removed("overwrite_output_dir", "transformers", "5.0", f"{_TA}; outputs in output_dir are simply overwritten"),
        _removed(
            "vllm_device",
            "TRL",
            "0.18",
            "choose vllm_mode: 'server' (a separate `trl vllm-serve` process on its own GPUs, what vllm_device "
            "did) or 'colocate'",
            safe=False,
            replacement="vllm_mode",
        ),
        _removed("vllm_dtype", "TRL", "0.18", "vLLM now takes the model's dtype; remove it"),
        _removed("vllm_enable_prefix_caching", "TRL", "0.18", "prefix caching is managed by vLLM; remove it"),
        _removed(
            "use_liger_loss",
            "TRL",
            "0.28",
            "the fused Liger GRPO loss is gone; TRL 1.16 always uses its own loss (Liger layer kernels: "
            "model_init_kwargs {use_kernels: true})",
            safe=False,
        ),
        _removed("no_cuda", "transformers", "5.0", f"{_TA}; use use_cpu", _no_cuda, "use_cpu"),
        _removed("use_mps_device", "transformers", "5.0", f"{_TA}; Apple MPS is picked automatically"),
        _removed(
            "logging_dir",
            "transformers",
            "5.15 (deprecated since 5.0)",
            "TensorBoard logs go under output_dir (or set TENSORBOARD_LOGGING_DIR in env)",
            safe=False,
        ),
        _removed("save_safetensors", "transformers", "5.0", f"{_TA}; checkpoints are always safetensors"),
        _removed(
            "include_inputs_for_metrics",
            "transformers",
            "5.0",
            f"{_TA}; use include_for_metrics: [inputs]",
            _include_inputs,
            "include_for_metrics",
        ),
        _removed(
            "push_to_hub_organization",
            "transformers",
            "5.0",
            f"{_TA}; put the organisation in hub_model_id",
            safe=False,
        ),
        _removed(
            "dispatch_batches",
            "transformers",
            "4.51",
            f"{_TA}; set accelerator_config: {{dispatch_batches: ...}}",
            safe=False,
        ),
        _removed(
            "split_batches",
            "transformers",
            "4.51",
            f"{_TA}; set accelerator_config: {{split_batches: ...}}",
            safe=False,
        ),
        _removed("use_ipex", "transformers", "4.57", _TA),
        _removed("jit_mode_eval", "transformers", "5.0", _TA),
        _removed("tpu_num_cores", "transformers", "5.0", f"{_TA}; the TPU launcher sets the core count"),
        _removed("fp16_backend", "transformers", "5.0", f"{_TA}; mixed precision always uses torch.amp"),
        _removed("half_precision_backend", "transformers", "5.0", f"{_TA}; mixed precision always uses torch.amp"),
        _removed("fp16_opt_level", "transformers", "5.0", f"{_TA}; apex is no longer supported"),
        _removed("past_index", "transformers", "5.0", _TA),
        _removed("ray_scope", "transformers", "5.0", _TA),
        _removed("use_legacy_prediction_loop", "transformers", "5.0", _TA),
    )
}


def describe(migration: Migration) -> str:
    """One sentence for the diagnostic message."""
    if migration.history:
        return migration.history
    if migration.kind == "renamed":
        return (
            f"{migration.key} was renamed {migration.replacement} in {migration.origin} {migration.since}; "
            f"the old name is no longer read"
        )
    return f"{migration.key} was removed in {migration.origin} {migration.since}"
