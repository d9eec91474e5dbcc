"""What grpo_runtime does with the fields of the batch schedule, the loss, importance sampling, entropy control and the optimizer."""

from __future__ import annotations

from grpo_runtime.common import Support, honoured, ignored, installed, refuse_if, refused
from grpo_runtime.training.optimizers import BNB_OPTIMIZERS, EVAL_METRIC_SCHEDULES, OPTIM_ARGS_READ, OPTIMIZERS
from grpo_schema.engine.codes import U_FEATURE, U_PACKAGE

FIELDS: dict[str, Support] = {
    "adam_beta1": honoured("optim.optimizer_class (AdamW)"),
    "adam_beta2": honoured("optim.optimizer_class (AdamW)"),
    "adam_epsilon": honoured("optim.optimizer_class (AdamW)"),
    "auto_find_batch_size": refused(
        "auto_find_batch_size retries with smaller batches; TRL 1.16 refuses it for "
        "GRPO too, and so does the validator (GRPO-B005)",
        "set the batch size yourself",
        U_FEATURE,
    ),
    "beta": honoured("loss.py (k3 KL term) and model.load_reference"),
    "delta": honoured("loss.py (two-sided clipping)"),
    "entropy_coef": honoured("loss.py (entropy bonus)"),
    "entropy_coef_delta": honoured("step.update_entropy_controller"),
    "entropy_coef_max": honoured("step.update_entropy_controller"),
    "entropy_coef_min": honoured("step.update_entropy_controller"),
    "entropy_target": honoured("step.update_entropy_controller"),
    "epsilon": honoured("loss.py (clipping)"),
    "epsilon_high": honoured("loss.py (clipping)"),
    "generation_batch_size": honoured("grpo_schema's run plan (sampler.py, train.py)"),
    "gradient_accumulation_steps": honoured("sampler.optimizer_windows, train.py"),
    "importance_sampling_level": honoured("loss.py (token or sequence ratios)"),
    "label_smoothing_factor": ignored("used by the HF loss, which GRPOTrainer replaces; TRL 1.16 ignores it too"),
    "learning_rate": honoured("optim.build_optimizer"),
    "loss_type": honoured("loss.py"),
    "lr_scheduler_kwargs": honoured("optim.build_scheduler"),
    "lr_scheduler_type": honoured(
        "optim.build_scheduler",
        refuse_if(
            lambda s: s.config.lr_scheduler_type in EVAL_METRIC_SCHEDULES,
            lambda s: (
                f"{s.config.lr_scheduler_type} needs evaluation metrics to schedule on, which "
                "grpo_runtime does not feed the scheduler"
            ),
            "use linear, cosine, constant or another step-based schedule",
            U_FEATURE,
        ),
    ),
    "mask_truncated_completions": honoured("rollout.build_rollout"),
    "max_grad_norm": honoured("step.optimizer_step"),
    "max_steps": honoured("sampler.total_steps"),
    "neftune_noise_alpha": honoured(
        "model.add_neftune_noise: uniform noise on the input embeddings of every "
        "forward in train mode (sampling and scoring too, as in TRL), none in eval"
    ),
    "num_generations": honoured("grpo_schema's run plan, advantages.py"),
    "num_iterations": honoured("grpo_schema's run plan, train.py"),
    "num_train_epochs": honoured("sampler.total_steps"),
    "off_policy_mask_threshold": honoured("loss.py"),
    "optim": honoured(
        "optim.optimizer_class (bitsandbytes' 8-bit, paged, Lion, RMSprop and AdEMAMix ones as the HF trainer maps "
        "them, embeddings kept in 32-bit states)",
        refuse_if(
            lambda s: s.config.optim not in OPTIMIZERS,
            lambda s: f"optimizer {s.config.optim!r} is not run by grpo_runtime",
            "use one of " + ", ".join(OPTIMIZERS),
            U_FEATURE,
        ),
        refuse_if(
            lambda s: s.config.optim in BNB_OPTIMIZERS and not installed("bitsandbytes"),
            lambda s: f"optimizer {s.config.optim!r} needs the bitsandbytes package, which is not installed here",
            "pip install 'bitsandbytes>=0.48' (its wheels run on CPUs too), or use adamw_torch",
            U_PACKAGE,
        ),
    ),
    "optim_args": honoured(
        "optim.parse_optim_args (sgd, adagrad, rmsprop, as the HF trainer)",
        refuse_if(
            lambda s: bool(s.config.optim_args) and s.config.optim not in OPTIM_ARGS_READ,
            lambda s: f"optim_args are not read for {s.config.optim!r}",
            "remove optim_args (they are read for " + ", ".join(OPTIM_ARGS_READ) + ")",
            U_FEATURE,
        ),
    ),
    "optim_target_modules": ignored(
        "read only by GaLore/APOLLO optimizers, which are refused; TRL 1.16 ignores "
        "it for the optimizers grpo_runtime runs"
    ),
    "per_device_train_batch_size": honoured("grpo_schema's run plan"),
    "ref_model_mixup_alpha": honoured("model.mix_into_reference"),
    "ref_model_sync_steps": honoured("recipe.cadence.after_step"),
    "sapo_temperature_neg": honoured("loss.py (sapo)"),
    "sapo_temperature_pos": honoured("loss.py (sapo)"),
    "steps_per_generation": honoured("grpo_schema's run plan, train.py"),
    "sync_ref_model": honoured("recipe.cadence.after_step"),
    "top_entropy_quantile": honoured("loss.py, step.micro_step_loss"),
    "use_adaptive_entropy": honoured("step.update_entropy_controller"),
    "use_bias_correction_kl": honoured("loss.py"),
    "vespo_k_neg": honoured("loss.py (vespo)"),
    "vespo_k_pos": honoured("loss.py (vespo)"),
    "vespo_lambda_neg": honoured("loss.py (vespo)"),
    "vespo_lambda_pos": honoured("loss.py (vespo)"),
    "vllm_importance_sampling_cap": honoured(
        "batch.py (the deprecated bound, which wins over clip_max as in TRL); with use_vllm"
    ),
    "vllm_importance_sampling_clip_max": honoured("batch.py (the ratio's upper bound); with use_vllm"),
    "vllm_importance_sampling_clip_min": honoured("batch.py (the ratio's lower bound); with use_vllm"),
    "vllm_importance_sampling_correction": honoured("loss.py (the sampler's importance ratio); with use_vllm"),
    "vllm_importance_sampling_mode": honoured("batch.py (token or sequence, truncate or mask); with use_vllm"),
    "warmup_steps": honoured("optim.build_scheduler"),
    "weight_decay": honoured("optim.build_optimizer (not on biases and norms)"),
}
