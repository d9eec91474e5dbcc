"""The field table: what grpo_runtime does with every field of TRL 1.16's `trl grpo` surface and every
`accelerate launch` key (see support.py for the categories). docs/runtime-fields.md is generated from it
(`python -m grpo_runtime.fields --write`); a test fails when the page is stale or a field is missing here.
"""

from __future__ import annotations

import sys

from grpo_schema.engine.codes import (U_FALLBACK, U_FEATURE, U_GENERATION, U_HUB, U_NO_EFFECT, U_NOTHING_TO_TRAIN, U_PACKAGE,
                               U_PROCESSES, U_SHARDING, U_SPEED_ONLY)

from .support import Setting, Support, honoured, ignored, installed, refuse_if, refused, warn_if, warned

# bitsandbytes' optimizers, as the HF trainer maps them: 8-bit or 32-bit states, paged or not (paging moves states
# to CPU memory under pressure on CUDA; on a CPU it falls back to the plain optimizer, the same numbers).
BNB_OPTIMIZERS = ("adamw_bnb_8bit", "adamw_8bit", "paged_adamw_32bit", "paged_adamw_8bit", "lion_32bit", "lion_8bit",
                  "paged_lion_32bit", "paged_lion_8bit", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit",
                  "ademamix", "ademamix_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit")
OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "sgd", "adagrad", "rmsprop", "adafactor") + BNB_OPTIMIZERS
# optimizers whose optim_args are read (as the HF trainer does)
OPTIM_ARGS_READ = ("sgd", "adagrad", "rmsprop", "rmsprop_bnb", "rmsprop_bnb_8bit", "rmsprop_bnb_32bit", "ademamix",
                   "ademamix_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit")
EVAL_METRIC_SCHEDULES = ("reduce_lr_on_plateau", "greedy")
REPORTERS = {"tensorboard": "tensorboard", "wandb": "wandb"}  # report_to name -> module that must be importable
LAUNCH_FLAGS = ("multi_gpu", "cpu", "same_network", "enable_cpu_affinity", "quiet")  # accelerate's on/off flags


def reporters(report_to) -> list[str]:
    """report_to as a list of names ("none" and unset: none)."""
    names = [report_to] if isinstance(report_to, str) else list(report_to or [])
    return [] if "none" in names else names


def _nothing_to_train(s: Setting) -> str:
    """A file without a model holds GRPOConfig arguments for a script; say what a run still needs."""
    c = s.config
    missing = ["model_name_or_path"]
    if not (c.dataset_name or c.datasets or getattr(c, "dataset_mixture", None)):
        missing.append("a dataset (dataset_name or datasets)")
    if not (c.reward_funcs or c.reward_model_name_or_path):
        missing.append("reward_funcs")
    needs = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
    return (f"the file sets no {needs}: it holds GRPOConfig settings for a Python script, and a run started from "
            "it has no model to train")


def _unsupported_reporters(s: Setting) -> list[str]:
    return [n for n in reporters(s.config.report_to) if n != "all" and n not in REPORTERS]


def _missing_reporters(s: Setting) -> list[str]:
    return [n for n in reporters(s.config.report_to) if n in REPORTERS and not installed(REPORTERS[n])]


def accelerator_settings(config) -> dict:
    """accelerator_config as a mapping: written inline, or the path of a JSON file (as TrainingArguments reads
    it). An unreadable file counts as empty here; loading it for the run reports the error."""
    value = config.accelerator_config
    if isinstance(value, str):
        import json

        try:
            with open(value, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return {}
    return value if isinstance(value, dict) else {}


def _accelerator(s: Setting) -> dict:
    return accelerator_settings(s.config)


def _log_completions(s: Setting) -> bool:
    return bool(s.config.log_completions)


def _vllm_missing(s: Setting) -> bool:
    """The engine (colocate) or the NCCL weight push (server mode on GPUs) needs vllm where the run starts; a CPU
    trainer talks to a server over HTTP alone. Decided without importing torch."""
    if not s.config.use_vllm or installed("vllm"):
        return False
    return s.config.vllm_mode == "colocate" or not s.config.use_cpu


def _peft(s: Setting) -> bool:
    return bool(s.config.use_peft)


def _machines(s: Setting) -> int:
    return int(s.launch.get("num_machines") or 1)


def _sharding_refusals(s: Setting) -> list[str]:
    from .distributed import refusals

    return refusals(s.config, s.launch)


def _sharding_warnings(s: Setting) -> list[str]:
    from .distributed import sharding_warnings

    return sharding_warnings(s.config, s.launch, s.running if s.command == "train" else s.world_size)


def _continuous(s: Setting) -> bool:
    from .continuous import continuous_batching_wanted

    return continuous_batching_wanted(s.config) and not s.config.use_vllm


SYMBOLIC_ACCURACY = {"accuracy_reward", "reasoning_accuracy_reward", "accuracy", "cosine", "length"}


def _accuracy_without_math_verify(s: Setting) -> list[str]:
    """The rewards that compare answers symbolically (TRL's and open-r1's), when math-verify is missing."""
    names = [n for n in s.config.reward_funcs or [] if isinstance(n, str) and n in SYMBOLIC_ACCURACY]
    return names if names and not installed("math_verify") else []


def attention_fallback(s: Setting) -> str | None:
    from .attention import fallback_warning

    return fallback_warning(s.config)


def _sharded_weights(s: Setting) -> bool:
    from .distributed import weights_sharded

    return weights_sharded(s.config, s.launch)


def _continuous_sharded(s: Setting) -> bool:
    """Each process schedules its own requests, so weights sharded across processes (FSDP, ZeRO-3) cannot serve
    them; TRL gathers the whole model in every process for this, which grpo_runtime does not do."""
    return _continuous(s) and _sharded_weights(s)


def _bad_continuous_settings(s: Setting) -> list[str]:
    """transformers_continuous_batching_config keys ContinuousBatchingConfig does not take (checked only where
    transformers is installed: the table is read without torch too)."""
    if not _continuous(s) or not installed("transformers"):
        return []
    import dataclasses
    import json

    from transformers.generation import ContinuousBatchingConfig

    value = s.config.transformers_continuous_batching_config or {}
    try:
        value = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return ["transformers_continuous_batching_config is a string but not a JSON object"]
    known = {f.name for f in dataclasses.fields(ContinuousBatchingConfig)} \
        if dataclasses.is_dataclass(ContinuousBatchingConfig) else None
    unknown = sorted(set(value) - known) if known is not None and isinstance(value, dict) else []
    return [f"transformers_continuous_batching_config has keys ContinuousBatchingConfig does not take: "
            f"{', '.join(unknown)}"] if unknown else []


def _only_with(switch: str, what: str) -> str:
    return f"read only with {switch} ({what}); without it TRL 1.16 ignores it too"


QUANTISED = ("model.quantization_config: bitsandbytes' quantised base weights (QLoRA), as `trl grpo` builds them; "
             "LoRA weights in bf16 as in TRL (the validator requires use_peft: GRPO-M002)")


def _quantised(s: Setting) -> bool:
    return bool(s.config.load_in_4bit or s.config.load_in_8bit)


QUANTISED_LIMITS = (
    refuse_if(lambda s: _quantised(s) and not installed("bitsandbytes"),
              "quantised loading needs the bitsandbytes package, which is not installed here",
              "pip install 'bitsandbytes>=0.48' (its wheels run on CPUs too)", U_PACKAGE),
    refuse_if(lambda s: _quantised(s) and _sharded_weights(s),
              "quantised weights are not sharded by grpo_runtime (FSDP, ZeRO-3)", "use DDP or ZeRO-1/2", U_SHARDING),
)
CONTINUOUS = "generation.build_backend -> continuous.py: the policy's generate_batch (paged KV cache), as in TRL"
CONTINUOUS_LIMITS = (
    refuse_if(_continuous_sharded, "continuous batching with weights sharded across processes (FSDP, ZeRO-3) is not "
              "run: each process schedules its own requests", "use vLLM, plain generate, DDP or ZeRO-1/2", U_SHARDING),
)

# --- config fields --------------------------------------------------------------------------------------------------
LORA = "peft LoraConfig in model.py (with use_peft; TRL ignores it too while use_peft is off)"
TOOLS = "tools, environments and rollout_func are Python objects a config cannot hold; TRL reads this only with them"
EVAL_PREDICTIONS = ("HF's evaluation loop uses it for predictions and compute_metrics; GRPOTrainer's evaluation "
                    "returns only metrics, so TRL 1.16 ignores it too")
WORKERS = ("rows are read in the training process: the same rows in the same order as TRL's DataLoader workers "
           "give, only the loading speed differs")
SPEED = "changes only speed or memory, not the numbers"
SAMPLER = "GRPOTrainer replaces the HF sampler and collator by its own; TRL 1.16 ignores it too"

CONFIG_FIELDS: dict[str, Support] = {
    "accelerator_config": honoured(
        "setup.new_accelerator: passed to accelerate (dataloader settings, gradient_accumulation_kwargs); "
        "even_batches deals the eval batches (evaluate.py), sync_each_batch syncs gradients every micro-step",
        refuse_if(lambda s: _accelerator(s).get("split_batches") and s.world_size > 1,
                  "split_batches: true splits each batch over the processes, which changes the prompts each "
                  "process generates for; grpo_runtime deals them as TRL does without it",
                  "remove split_batches (per_device_train_batch_size is per process)", U_FEATURE),
        refuse_if(lambda s: "num_steps" in (_accelerator(s).get("gradient_accumulation_kwargs") or {}),
                  "gradient_accumulation_kwargs.num_steps replaces gradient_accumulation_steps",
                  "set gradient_accumulation_steps instead", U_FEATURE),
        warn_if(lambda s: _accelerator(s).get("split_batches") is True and s.world_size == 1,
                "split_batches cannot change a one-process run", U_NO_EFFECT)),
    "activation_checkpointing": honoured("model.load_policy (off while sampling or scoring without gradients)"),
    "activation_checkpointing_kwargs": honoured("model.enable_checkpointing"),
    "adam_beta1": honoured("optim.optimizer_class (AdamW)"),
    "adam_beta2": honoured("optim.optimizer_class (AdamW)"),
    "adam_epsilon": honoured("optim.optimizer_class (AdamW)"),
    "attn_implementation": honoured(
        "model.load_kwargs (from_pretrained, the policy and a reward model; attention.py replaces a kernel whose "
        "package is missing by sdpa)",
        warn_if(lambda s: "attn_implementation" not in (s.config.model_init_kwargs or {})
                and attention_fallback(s) is not None, lambda s: attention_fallback(s), U_SPEED_ONLY)),
    "auto_find_batch_size": refused("auto_find_batch_size retries with smaller batches; TRL 1.16 refuses it for "
                                    "GRPO too, and so does the validator (GRPO-B005)", "set the batch size yourself",
                                    U_FEATURE),
    "average_tokens_across_devices": ignored("GRPOTrainer normalises its loss itself (num_items_in_batch over all "
                                             "processes) and turns the HF scaling off; TRL 1.16 ignores it too"),
    "batch_eval_metrics": ignored(EVAL_PREDICTIONS),
    "beta": honoured("loss.py (k3 KL term) and model.load_reference"),
    "bf16": honoured("precision.mixed_precision (accelerate autocast)"),
    "bf16_full_eval": ignored("HF casts the model for evaluations outside training only; during training TRL 1.16 "
                              "ignores it too"),
    "bnb_4bit_quant_storage": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "bnb_4bit_quant_type": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "cache_implementation": honoured("rollout.generation_config"),
    "cast_lm_head_to_fp32": honoured("model.cast_lm_head_to_fp32 (a LoRA adapter on lm_head, which it could not "
                                     "keep in fp32, is refused by the validator: GRPO-M007)"),
    "chat_template_kwargs": honoured("rollout.tokenize_prompts, rewards.RewardModel"),
    "data_seed": ignored("GRPOTrainer's sampler is seeded with seed; TRL 1.16 ignores data_seed"),
    "dataloader_drop_last": honoured("evaluate.eval_batches (the training sampler's length is always a multiple "
                                     "of the batch, as in TRL)"),
    "dataloader_in_order": ignored("orders batches coming from several workers; rows are read in order here "
                                   "and TRL's sampler fixes the order anyway"),
    "dataloader_multiprocessing_context": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_num_workers": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_persistent_workers": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_pin_memory": ignored("GRPO batches are lists of dataset rows (TRL's identity collator), which the "
                                     "DataLoader has no tensors to pin in, so TRL 1.16 ignores it too"),
    "dataloader_prefetch_factor": warned(WORKERS, U_SPEED_ONLY),
    "dataset_config": honoured("data.load_local_or_hub"),
    "dataset_name": honoured("data.load_split"),
    "dataset_streaming": refused("streaming datasets are not run: the prompt order needs the dataset's length",
                                 "set dataset_streaming: false (the dataset is then loaded whole)", U_FEATURE),
    "dataset_test_split": honoured("data.load_split (evaluation)"),
    "dataset_train_split": honoured("data.load_split"),
    "datasets": honoured("data.load_mixture"),
    "ddp_backend": honoured("setup.new_accelerator (the process group's backend)"),
    "ddp_broadcast_buffers": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_bucket_cap_mb": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_find_unused_parameters": honoured("setup.new_accelerator (DistributedDataParallelKwargs; unset: "
                                           "on unless activation checkpointing, as the HF trainer decides)"),
    "ddp_static_graph": honoured("setup.new_accelerator (DistributedDataParallelKwargs)"),
    "ddp_timeout": honoured("setup.new_accelerator (the process group's timeout, InitProcessGroupKwargs)"),
    "debug": refused("debug modes (underflow_overflow, tpu_metrics_debug) are not run", "remove debug", U_FEATURE),
    "deepspeed": honoured(
        "sharding.accelerator_plugins: accelerate's DeepSpeed plugin (ZeRO-1/2/3, its \"auto\" values filled from "
        "the run); the launch keys' sharding is checked here too",
        refuse_if(lambda s: bool(_sharding_refusals(s)),
                  lambda s: "; ".join(m.removeprefix("deepspeed: ") for m in _sharding_refusals(s)),
                  "fix the file or setting named, or run the config with `trl grpo`", U_SHARDING),
        warn_if(lambda s: bool(_sharding_warnings(s)), lambda s: "; ".join(_sharding_warnings(s)), U_NO_EFFECT)),
    "delta": honoured("loss.py (two-sided clipping)"),
    "disable_dropout": honoured("model.disable_dropout"),
    "disable_tqdm": honoured("train.progress_bar"),
    "do_eval": ignored("a script switch; GRPOTrainer evaluates by eval_strategy, and TRL 1.16 ignores it too"),
    "do_predict": ignored("a script switch no GRPO script reads; TRL 1.16 ignores it too"),
    "do_train": ignored("a script switch; GRPO always trains, and TRL 1.16 ignores it too"),
    "ds3_gather_for_generation": warned("under ZeRO-3 generation gathers each layer's parameters as it runs; false "
                                        "(TRL: generate from the shards) changes only memory and speed",
                                        U_SPEED_ONLY, when=lambda s: not s.config.ds3_gather_for_generation),
    "dtype": honoured("model.load_kwargs (from_pretrained: the policy, the reference and a reward model)"),
    "enable_jit_checkpoint": honoured("train.JitCheckpoint: SIGTERM saves checkpoint-STEP after the current "
                                      "optimizer step and stops"),
    "entropy_coef": honoured("loss.py (entropy bonus)"),
    "entropy_coef_delta": honoured("step.update_entropy_controller"),
    "entropy_coef_max": honoured("step.update_entropy_controller"),
    "entropy_coef_min": honoured("step.update_entropy_controller"),
    "entropy_target": honoured("step.update_entropy_controller"),
    "epsilon": honoured("loss.py (clipping)"),
    "epsilon_high": honoured("loss.py (clipping)"),
    "eval_accumulation_steps": ignored(EVAL_PREDICTIONS),
    "eval_delay": honoured("train.should_evaluate"),
    "eval_do_concat_batches": ignored(EVAL_PREDICTIONS),
    "eval_on_start": honoured("train.main (an evaluation before the first step)"),
    "eval_steps": honoured("train.should_evaluate"),
    "eval_strategy": honoured("train.should_evaluate, evaluate.py"),
    "eval_use_gather_object": ignored(EVAL_PREDICTIONS),
    "fp16": honoured("precision.mixed_precision (accelerate autocast and loss scaling)"),
    "fp16_full_eval": ignored("HF casts the model for evaluations outside training only; during training TRL 1.16 "
                              "ignores it too"),
    "fsdp": honoured("sharding.accelerator_plugins: accelerate's FSDP2 plugin (full shard; a version 1 request "
                     "runs as FSDP2, with a warning)"),
    "fsdp_config": honoured("distributed.fsdp_plugin_kwargs: the plugin's settings (wrap policy, offload, ...)"),
    "full_determinism": honoured("setup.seed_everything: deterministic torch algorithms and the environment "
                                 "variables transformers sets"),
    "generation_batch_size": honoured("grpo_schema's run plan (sampler.py, train.py)"),
    "generation_kwargs": honoured("rollout.generation_config (wins over the named fields)"),
    "gradient_accumulation_steps": honoured("sampler.optimizer_windows, train.py"),
    "gradient_checkpointing": honoured("model.checkpointing_settings (alias of activation_checkpointing)"),
    "gradient_checkpointing_kwargs": honoured("model.checkpointing_settings"),
    "greater_is_better": honoured("best.record_evaluation (unset: larger is better unless the metric's name ends in "
                                  "'loss')"),
    "hub_always_push": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_model_id": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_private_repo": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_revision": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_strategy": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_token": refused("a token in a config file is refused: it would be copied into grpo_config.yaml and logs",
                         "remove hub_token; set HF_TOKEN in the environment instead", U_HUB),
    "ignore_data_skip": warned("a resume always continues the prompt order exactly where the checkpoint stopped "
                               "(the HF loop would restart the epoch's batches)", U_NO_EFFECT),
    "ignore_bias_buffers": ignored("read by TRL's DPO script only; `trl grpo` ignores it"),
    "importance_sampling_level": honoured("loss.py (token or sequence ratios)"),
    "include_for_metrics": ignored(EVAL_PREDICTIONS),
    "include_num_input_tokens_seen": ignored(
        "the HF loop counts `input_ids` of its batches, which GRPO batches (rows of prompts) do not have, so TRL "
        "1.16 counts nothing; num_tokens is logged either way"),
    "label_names": ignored(EVAL_PREDICTIONS),
    "label_smoothing_factor": ignored("used by the HF loss, which GRPOTrainer replaces; TRL 1.16 ignores it too"),
    "learning_rate": honoured("optim.build_optimizer"),
    "length_column_name": ignored(SAMPLER),
    "liger_kernel_config": ignored(_only_with("use_liger_kernel", "which is warned about")),
    "load_best_model_at_end": honoured("train.load_best_model: the best checkpoint's weights before the final save "
                                       "(sharded runs too); best.keep_only_best with save_total_limit 1"),
    "load_in_4bit": honoured(QUANTISED, *QUANTISED_LIMITS),
    "load_in_8bit": honoured(QUANTISED, *QUANTISED_LIMITS),
    "local_rank": ignored("the launcher's LOCAL_RANK decides; TRL 1.16 ignores the field too"),
    "log_completions": honoured("train.log_completions (completions.jsonl)"),
    "log_completions_hub_repo": refused("uploading the logged completions to a Hub dataset is not run",
                                        "remove log_completions_hub_repo; completions.jsonl holds them", U_HUB),
    "log_level": honoured("train.set_log_levels (transformers and datasets logging on the main process)"),
    "log_level_replica": honoured("train.set_log_levels (on the other processes)"),
    "log_multimodal": ignored("images are logged only for multimodal prompts, which a config cannot make "
                              "(they come from the dataset's image columns); text prompts ignore it in TRL too"),
    "log_on_each_node": honoured("train.set_log_levels (the main process of each machine logs at log_level)"),
    "log_unique_prompts": warned("TRL dedups prompts in the wandb/trackio completions table; completions.jsonl "
                                 "keeps every row", U_NO_EFFECT, when=lambda s: s.config.log_unique_prompts
                                 and _log_completions(s)),
    "logging_first_step": honoured("train.should_log"),
    "logging_nan_inf_filter": honoured("train.logged_loss (a NaN/inf step loss is replaced by the mean so far)"),
    "logging_steps": honoured("train.should_log"),
    "logging_strategy": honoured("train.should_log"),
    "lora_alpha": honoured(LORA),
    "lora_dropout": honoured(LORA),
    "lora_modules_to_save": honoured(LORA),
    "lora_r": honoured(LORA),
    "lora_target_modules": honoured(LORA),
    "lora_target_parameters": honoured(LORA),
    "lora_task_type": honoured(LORA),
    "loss_type": honoured("loss.py"),
    "lr_scheduler_kwargs": honoured("optim.build_scheduler"),
    "lr_scheduler_type": honoured(
        "optim.build_scheduler",
        refuse_if(lambda s: s.config.lr_scheduler_type in EVAL_METRIC_SCHEDULES,
                  lambda s: f"{s.config.lr_scheduler_type} needs evaluation metrics to schedule on, which "
                            "grpo_runtime does not feed the scheduler",
                  "use linear, cosine, constant or another step-based schedule", U_FEATURE)),
    "mask_truncated_completions": honoured("rollout.build_rollout"),
    "max_completion_length": honoured("rollout.generation_config"),
    "max_grad_norm": honoured("step.optimizer_step"),
    "max_steps": honoured("sampler.total_steps"),
    "max_tool_calling_iterations": ignored(TOOLS),
    "metric_for_best_model": honoured("best.record_evaluation after each evaluation; the best checkpoint is kept from "
                                      "save_total_limit's pruning (checkpoint.prune_checkpoints)"),
    "min_p": honoured("rollout.generation_config"),
    "model_init_kwargs": honoured(
        "model.load_kwargs (win over the named fields; the reward model's too, as in trl grpo)",
        warn_if(lambda s: "attn_implementation" in (s.config.model_init_kwargs or {})
                and attention_fallback(s) is not None, lambda s: attention_fallback(s), U_SPEED_ONLY)),
    "model_name_or_path": honoured(
        "model.py, the tokenizer and the reference model",
        refuse_if(lambda s: s.config.model_name_or_path is None, _nothing_to_train,
                  "add model_name_or_path (a local path or Hub id), and the dataset and reward_funcs if missing, to "
                  "the file or pass them with --set KEY=VALUE", U_NOTHING_TO_TRAIN)),
    "model_revision": honoured("model.load_kwargs, model.load_tokenizer"),
    "multi_objective_aggregation": honoured("advantages.compute_advantages"),
    "neftune_noise_alpha": honoured("model.add_neftune_noise: uniform noise on the input embeddings of every "
                                    "forward in train mode (sampling and scoring too, as in TRL), none in eval"),
    "num_completions_to_print": warned("TRL prints this many completions to the console; completions.jsonl holds "
                                       "all of them", U_NO_EFFECT,
                                       when=lambda s: s.config.num_completions_to_print is not None
                                       and _log_completions(s)),
    "num_generations": honoured("grpo_schema's run plan, advantages.py"),
    "num_generations_eval": honoured("batch.Grouping.evaluation"),
    "num_iterations": honoured("grpo_schema's run plan, train.py"),
    "num_train_epochs": honoured("sampler.total_steps"),
    "off_policy_mask_threshold": honoured("loss.py"),
    "optim": honoured(
        "optim.optimizer_class (bitsandbytes' 8-bit, paged, Lion, RMSprop and AdEMAMix ones as the HF trainer maps "
        "them, embeddings kept in 32-bit states)",
        refuse_if(lambda s: s.config.optim not in OPTIMIZERS,
                  lambda s: f"optimizer {s.config.optim!r} is not run by grpo_runtime",
                  "use one of " + ", ".join(OPTIMIZERS), U_FEATURE),
        refuse_if(lambda s: s.config.optim in BNB_OPTIMIZERS and not installed("bitsandbytes"),
                  lambda s: f"optimizer {s.config.optim!r} needs the bitsandbytes package, which is not installed "
                  "here", "pip install 'bitsandbytes>=0.48' (its wheels run on CPUs too), or use adamw_torch",
                  U_PACKAGE)),
    "optim_args": honoured(
        "optim.parse_optim_args (sgd, adagrad, rmsprop, as the HF trainer)",
        refuse_if(lambda s: bool(s.config.optim_args) and s.config.optim not in OPTIM_ARGS_READ,
                  lambda s: f"optim_args are not read for {s.config.optim!r}",
                  "remove optim_args (they are read for " + ", ".join(OPTIM_ARGS_READ) + ")", U_FEATURE)),
    "optim_target_modules": ignored("read only by GaLore/APOLLO optimizers, which are refused; TRL 1.16 ignores "
                                    "it for the optimizers grpo_runtime runs"),
    "output_dir": honoured("train.py (every output)"),
    "pad_to_multiple_of": honoured("batch.pad_multiple"),
    "parallelism_config": refused("context, tensor or sequence parallelism (accelerate's ParallelismConfig) is "
                                  "not run; in a file the validator refuses it already (GRPO-W003)",
                                  "remove parallelism_config", U_SHARDING),
    "per_device_eval_batch_size": honoured("evaluate.eval_batches"),
    "per_device_train_batch_size": honoured("grpo_schema's run plan"),
    "prediction_loss_only": ignored(EVAL_PREDICTIONS),
    "project": honoured("metrics.WandbSink"),
    "push_to_hub": honoured("hub.HubPusher: the repo is made at start, each save is uploaded as hub_strategy says "
                            "and the final model at the end; the token comes from the environment, never the file"),
    "ref_model_mixup_alpha": honoured("model.mix_into_reference"),
    "ref_model_sync_steps": honoured("train.after_step"),
    "remove_unused_columns": honoured("data.load_prompts"),
    "repetition_penalty": honoured("rollout.generation_config"),
    "report_to": honoured(
        "metrics.open_sinks (metrics.jsonl always; tensorboard, wandb)",
        warn_if(lambda s: bool(_unsupported_reporters(s)),
                lambda s: f"report_to {', '.join(_unsupported_reporters(s))} is not written by grpo_runtime (it "
                          "writes tensorboard and wandb); metrics.jsonl has every metric", U_NO_EFFECT),
        warn_if(lambda s: bool(_missing_reporters(s)),
                lambda s: f"report_to {', '.join(_missing_reporters(s))}: its package is not installed, so it is "
                          "skipped (pip install it to report there); metrics.jsonl has every metric", U_NO_EFFECT)),
    "restore_callback_states_from_checkpoint": ignored("restores callbacks' own state; a config adds no stateful "
                                                       "callbacks, so TRL 1.16 restores nothing either"),
    "resume_from_checkpoint": honoured("checkpoint.resolve_resume, checkpoint.load_checkpoint"),
    "reward_funcs": honoured(
        "rewards.resolve_reward_func (open-r1's registry under its profile)",
        warn_if(_accuracy_without_math_verify,
                lambda s: f"{', '.join(_accuracy_without_math_verify(s))} compare answers with math-verify in TRL, "
                "which is not installed here: a normalised exact match is used, which misses equivalent forms "
                "(0.5 and \\frac{1}{2})", U_FALLBACK)),
    "reward_model_name_or_path": honoured("rewards.RewardModel"),
    "reward_weights": honoured("advantages.compute_advantages"),
    "router_aux_loss_coef": honoured("step.micro_step_loss (MoE models; refused on dense ones when loaded)"),
    "run_name": honoured("metrics.WandbSink"),
    "sapo_temperature_neg": honoured("loss.py (sapo)"),
    "sapo_temperature_pos": honoured("loss.py (sapo)"),
    "save_on_each_node": warned("checkpoints are written once, by the main process: on one machine that is what "
                                "TRL does too, across machines output_dir must be shared", U_NO_EFFECT),
    "save_only_model": honoured("checkpoint.save_checkpoint"),
    "save_steps": honoured("train.should_save"),
    "save_strategy": honoured("train.should_save (best: after each evaluation that sets a new best)"),
    "save_total_limit": honoured("checkpoint.prune_checkpoints (keeps the newest and the best checkpoint)"),
    "scale_rewards": honoured("advantages.compute_advantages"),
    "seed": honoured("setup.build_parts (seed, then seed + rank for sampling), sampler.PromptOrder"),
    "shuffle_dataset": honoured("sampler.PromptOrder"),
    "skip_memory_metrics": warned("memory metrics are not measured by grpo_runtime", U_NO_EFFECT),
    "steps_per_generation": honoured("grpo_schema's run plan, train.py"),
    "streaming": refused("streaming datasets are not run: the prompt order needs the dataset's length",
                         "set streaming: false", U_FEATURE),
    "sync_ref_model": honoured("train.after_step"),
    "temperature": honoured("rollout.generation_config, logprobs.py"),
    "test_split_size": honoured("data.load_mixture"),
    "tf32": honoured("setup.seed_everything (torch's TF32 switches; CUDA Ampere or newer only)",
                     warn_if(lambda s: s.config.tf32 is not None and s.config.use_cpu,
                             "TF32 is a CUDA matmul mode; it cannot change a run on the CPU", U_NO_EFFECT)),
    "top_entropy_quantile": honoured("loss.py, step.micro_step_loss"),
    "top_k": honoured("rollout.generation_config"),
    "top_p": honoured("rollout.generation_config"),
    "torch_compile": warned("the model runs eagerly: " + SPEED, U_SPEED_ONLY),
    "torch_compile_backend": ignored(_only_with("torch_compile", "which is warned about")),
    "torch_compile_mode": ignored(_only_with("torch_compile", "which is warned about")),
    "torch_empty_cache_steps": warned("the accelerator's cache is not emptied every N steps: " + SPEED,
                                      U_SPEED_ONLY),
    "trackio_bucket_id": ignored(_only_with("report_to: trackio", "which is refused")),
    "trackio_space_id": ignored(_only_with("report_to: trackio", "which is refused")),
    "trackio_static_space_id": ignored(_only_with("report_to: trackio", "which is refused")),
    "train_sampling_strategy": ignored(SAMPLER),
    "transformers_continuous_batching_config": honoured(
        "continuous.py: ContinuousBatchingConfig(**it), max_memory_percent 0.5 unless set, as in TRL",
        refuse_if(_bad_continuous_settings, lambda s: _bad_continuous_settings(s)[0],
                  "use ContinuousBatchingConfig's field names (transformers.generation)", U_GENERATION)),
    "trust_remote_code": honoured("model.load_kwargs, model.load_tokenizer"),
    "use_adaptive_entropy": honoured("step.update_entropy_controller"),
    "use_bias_correction_kl": honoured("loss.py"),
    "use_bnb_nested_quant": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "use_cache": honoured("model.load_policy (the model config's use_cache, saved with the model, as TRL)"),
    "use_cpu": honoured("setup.new_accelerator"),
    "use_dora": honoured(LORA),
    "use_liger_kernel": warned("no Liger kernels are applied: " + SPEED, U_SPEED_ONLY),
    "use_peft": honoured(
        "model.wrap_lora",
        refuse_if(lambda s: _peft(s) and not installed("peft"), "use_peft needs the peft package, which is not "
                  "installed", "pip install 'grpo-config[peft]'", U_PACKAGE)),
    "use_rslora": honoured(LORA),
    "use_transformers_continuous_batching": honoured(CONTINUOUS, *CONTINUOUS_LIMITS),
    "use_transformers_paged": honoured(CONTINUOUS + "; the deprecated name of use_transformers_continuous_batching "
                                       "(whose limits apply)"),
    "use_vllm": honoured(
        "generation.build_backend: a vLLM engine in each process (colocate) or a `trl vllm-serve` server",
        refuse_if(_vllm_missing, "use_vllm: true needs the vllm package, which is not installed here",
                  "install the `vllm` extra (pip install 'grpo-config[runtime,vllm]'; CPU-only machines: "
                  "scripts/setup-vllm.sh), or set use_vllm: false", U_PACKAGE)),
    "vespo_k_neg": honoured("loss.py (vespo)"),
    "vespo_k_pos": honoured("loss.py (vespo)"),
    "vespo_lambda_neg": honoured("loss.py (vespo)"),
    "vespo_lambda_pos": honoured("loss.py (vespo)"),
    "vllm_enable_sleep_mode": honoured("vllm_colocate.ColocateEngine (warned where the platform's vLLM has no sleep mode); with use_vllm"),
    "vllm_gpu_memory_utilization": honoured("vllm_colocate.ColocateEngine (the engine's share of the device); with use_vllm"),
    "vllm_group_port": honoured("vllm_server.ServerBackend (the weight-transfer group); with use_vllm"),
    "vllm_importance_sampling_cap": honoured("batch.py (the deprecated bound, which wins over clip_max as in TRL); with use_vllm"),
    "vllm_importance_sampling_clip_max": honoured("batch.py (the ratio's upper bound); with use_vllm"),
    "vllm_importance_sampling_clip_min": honoured("batch.py (the ratio's lower bound); with use_vllm"),
    "vllm_importance_sampling_correction": honoured("loss.py (the sampler's importance ratio); with use_vllm"),
    "vllm_importance_sampling_mode": honoured("batch.py (token or sequence, truncate or mask); with use_vllm"),
    "vllm_max_model_length": honoured("vllm_colocate.ColocateEngine (max_model_len); with use_vllm"),
    "vllm_mode": honoured("generation.build_backend (colocate or server); with use_vllm"),
    "vllm_model_impl": honoured("vllm_colocate.ColocateEngine (model_impl); with use_vllm"),
    "vllm_server_base_url": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_host": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_port": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_timeout": honoured("vllm_server.ServerBackend (how long to wait for the server at start); with use_vllm"),
    "vllm_structured_outputs_regex": honoured("generation.sampling settings (vLLM's structured outputs); with use_vllm"),
    "vllm_tensor_parallel_size": honoured("vllm_colocate.ColocateEngine (prompts gathered per tensor-parallel group); with use_vllm"),
    "warmup_steps": honoured("optim.build_scheduler"),
    "weight_decay": honoured("optim.build_optimizer (not on biases and norms)"),
}


# --- accelerate launch keys -----------------------------------------------------------------------------------------
def _one_process_command(s: Setting) -> bool:
    return s.command == "train" and s.running == 1 and int(s.launch.get("num_processes") or 1) > 1


LAUNCHED = "cli.launch_arguments: passed to `accelerate launch` by `grpo launch` (the command line wins)"
ONLY_LAUNCH = warn_if(lambda s: s.command == "train", "an `accelerate launch` option: `grpo train` starts no "
                      "launcher, so it cannot change this run (`grpo launch FILE` applies it)", U_NO_EFFECT)

SHARDED_LAUNCH = ("distributed.launcher_flags: accelerate's --config_file (our copies of the configs TRL ships for "
                  "accelerate_config names), --use_deepspeed --zero_stage or --use_fsdp, passed by `grpo launch`")

LAUNCH_FIELDS: dict[str, Support] = {
    "accelerate_config": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "config_file": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "cpu": honoured(LAUNCHED, ONLY_LAUNCH),
    "enable_cpu_affinity": honoured(LAUNCHED, ONLY_LAUNCH),
    "gpu_ids": honoured(LAUNCHED, ONLY_LAUNCH),
    "machine_rank": honoured(LAUNCHED, ONLY_LAUNCH),
    "main_process_ip": honoured(LAUNCHED, ONLY_LAUNCH),
    "main_process_port": honoured(LAUNCHED, ONLY_LAUNCH),
    "max_restarts": honoured(LAUNCHED, ONLY_LAUNCH),
    "mixed_precision": honoured(LAUNCHED + "; bf16/fp16 in the config decide the training precision, as in TRL",
                                ONLY_LAUNCH),
    "monitor_interval": honoured(LAUNCHED, ONLY_LAUNCH),
    "multi_gpu": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_cpu_threads_per_process": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_machines": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_processes": honoured(
        "cli.launch_command: the processes `grpo launch` starts (--num-processes wins) and the world size the "
        "config is checked at",
        refuse_if(_one_process_command,
                  lambda s: f"the file asks for {s.launch.get('num_processes')} processes but `grpo train` runs one",
                  "start it with `grpo launch FILE` (num_processes is read from the file)", U_PROCESSES)),
    "quiet": honoured(LAUNCHED, ONLY_LAUNCH),
    "rdzv_backend": honoured(LAUNCHED, ONLY_LAUNCH),
    "same_network": honoured(LAUNCHED, ONLY_LAUNCH),
    "use_deepspeed": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "use_fsdp": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "use_megatron_lm": refused("Megatron-LM is not run by grpo_runtime", "remove use_megatron_lm", U_SHARDING,
                               when=lambda s: bool(s.launch.get("use_megatron_lm"))),
    "zero_stage": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
}


# --- docs/runtime-fields.md ------------------------------------------------------------------------------------------
def markdown() -> str:
    """The field table as a page: every field, its category and where / why."""
    from .support import CATEGORIES

    lines = ["# What grpo_runtime does with each field", "",
             "Generated from `grpo_runtime/fields.py` (`python -m grpo_runtime.fields --write`); a test fails when "
             "this page is stale.", "",
             "Every field of TRL 1.16's `trl grpo` surface and every `accelerate launch` key a config file may "
             "carry is in one of four categories:", "",
             "- **honoured**: the run does what the field says (where);",
             "- **refused**: a value other than the default is refused before anything loads (exit 3 from "
             "`grpo train` / `grpo launch`, an error in `--dry-run` and in the service's launch check);",
             "- **warned**: the run goes ahead with a warning saying why the field cannot change it;",
             "- **ignored**: TRL 1.16 ignores it in the same setting too (why).", "",
             "An honoured field may still refuse or warn about some values; those limits are listed with it. The "
             "codes are `grpo codes` area U.", ""]
    for title, entries in (("Config fields", CONFIG_FIELDS), ("Launch keys (`accelerate launch`)", LAUNCH_FIELDS)):
        counts = ", ".join(f"{sum(e.category == c for e in entries.values())} {c}" for c in CATEGORIES)
        lines += [f"## {title}: {len(entries)} ({counts})", "", "| field | category | where / why | refusals and warnings |",
                  "|---|---|---|---|"]
        for name in sorted(entries):
            entry = entries[name]
            limits = "; ".join(
                f"{'refused' if limit.refuse else 'warned'} ({limit.code})"
                + ("" if callable(limit.message) or entry.category != "honoured" else f": {limit.message}")
                + (f"; to run: {limit.hint}" if limit.hint and (entry.category == "refused" or callable(limit.message))
                   else "")
                for limit in entry.limits)
            lines.append(f"| `{name}` | {entry.category} | {entry.note.replace('|', '/')} | {limits} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "runtime-fields.md"
    if "--write" in sys.argv:
        page.write_text(markdown(), encoding="utf-8")
    else:
        sys.stdout.write(markdown())
