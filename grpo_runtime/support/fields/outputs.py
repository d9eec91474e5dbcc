"""What grpo_runtime does with the fields of logging, checkpoints, evaluation and the Hub."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, ignored, installed, refused, warn_if, warned
from grpo_runtime.outputs.reporters import REPORTERS, reporters
from grpo_runtime.support.fields.shared import EVAL_PREDICTIONS, only_with
from grpo_schema.engine.codes import U_FEATURE, U_HUB, U_NO_EFFECT


def _unsupported_reporters(s: Setting) -> list[str]:
    return [n for n in reporters(s.config.report_to) if n != "all" and n not in REPORTERS]


def _missing_reporters(s: Setting) -> list[str]:
    return [n for n in reporters(s.config.report_to) if n in REPORTERS and not installed(REPORTERS[n])]


def _log_completions(s: Setting) -> bool:
    return bool(s.config.log_completions)


FIELDS: dict[str, Support] = {
    "batch_eval_metrics": ignored(EVAL_PREDICTIONS),
    "debug": refused("debug modes (underflow_overflow, tpu_metrics_debug) are not run", "remove debug", U_FEATURE),
    "disable_tqdm": honoured("recipe.logs.progress_bar"),
    "do_eval": ignored("a script switch; GRPOTrainer evaluates by eval_strategy, and TRL 1.16 ignores it too"),
    "enable_jit_checkpoint": honoured(
        "recipe.saving.JitCheckpoint: SIGTERM saves checkpoint-STEP after the current optimizer step and stops"
    ),
    "eval_accumulation_steps": ignored(EVAL_PREDICTIONS),
    "eval_delay": honoured("recipe.cadence.should_evaluate"),
    "eval_do_concat_batches": ignored(EVAL_PREDICTIONS),
    "eval_on_start": honoured("train.main (an evaluation before the first step)"),
    "eval_steps": honoured("recipe.cadence.should_evaluate"),
    "eval_strategy": honoured("recipe.cadence.should_evaluate, evaluate.py"),
    "eval_use_gather_object": ignored(EVAL_PREDICTIONS),
    "greater_is_better": honoured(
        "best.record_evaluation (unset: larger is better unless the metric's name ends in 'loss')"
    ),
    "hub_always_push": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_model_id": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_private_repo": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_revision": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_strategy": honoured("hub.HubPusher (with push_to_hub)"),
    "hub_token": refused(
        "a token in a config file is refused: it would be copied into grpo_config.yaml and logs",
        "remove hub_token; set HF_TOKEN in the environment instead",
        U_HUB,
    ),
    "ignore_data_skip": warned(
        "a resume always continues the prompt order exactly where the checkpoint stopped "
        "(the HF loop would restart the epoch's batches)",
        U_NO_EFFECT,
    ),
    "include_for_metrics": ignored(EVAL_PREDICTIONS),
    "include_num_input_tokens_seen": ignored(
        "the HF loop counts `input_ids` of its batches, which GRPO batches (rows of prompts) do not have, so TRL "
        "1.16 counts nothing; num_tokens is logged either way"
    ),
    "load_best_model_at_end": honoured(
        "recipe.saving.load_best_model: the best checkpoint's weights before the final save "
        "(sharded runs too); best.keep_only_best with save_total_limit 1"
    ),
    "log_completions": honoured(
        "recipe.generation.log_completions (completions.jsonl: every row, with each reward function's "
        "score, the total reward, advantage, length and truncation); when off, the "
        "first 2 prompt groups of each logged step still go to completions-sample.jsonl"
    ),
    "log_completions_hub_repo": refused(
        "uploading the logged completions to a Hub dataset is not run",
        "remove log_completions_hub_repo; completions.jsonl holds them",
        U_HUB,
    ),
    "log_level": honoured("recipe.start.set_log_levels (transformers and datasets logging on the main process)"),
    "log_level_replica": honoured("recipe.start.set_log_levels (on the other processes)"),
    "log_multimodal": ignored(
        "images are logged only for multimodal prompts, which a config cannot make "
        "(they come from the dataset's image columns); text prompts ignore it in TRL too"
    ),
    "log_on_each_node": honoured("recipe.start.set_log_levels (the main process of each machine logs at log_level)"),
    "log_unique_prompts": warned(
        "TRL dedups prompts in the wandb/trackio completions table; completions.jsonl keeps every row",
        U_NO_EFFECT,
        when=lambda s: s.config.log_unique_prompts and _log_completions(s),
    ),
    "logging_first_step": honoured("recipe.cadence.should_log"),
    "logging_nan_inf_filter": honoured("recipe.logs.logged_loss (a NaN/inf step loss is replaced by the mean so far)"),
    "logging_steps": honoured("recipe.cadence.should_log"),
    "logging_strategy": honoured("recipe.cadence.should_log"),
    "metric_for_best_model": honoured(
        "best.record_evaluation after each evaluation; the best checkpoint is kept from "
        "save_total_limit's pruning (checkpoint.prune_checkpoints)"
    ),
    "num_completions_to_print": warned(
        "TRL prints this many completions to the console; completions.jsonl holds all of them",
        U_NO_EFFECT,
        when=lambda s: s.config.num_completions_to_print is not None and _log_completions(s),
    ),
    "num_generations_eval": honoured("batch.Grouping.evaluation"),
    "output_dir": honoured("train.py (every output)"),
    "per_device_eval_batch_size": honoured("evaluate.eval_batches"),
    "prediction_loss_only": ignored(EVAL_PREDICTIONS),
    "project": honoured("metrics.WandbSink"),
    "push_to_hub": honoured(
        "hub.HubPusher: the repo is made at start, each save is uploaded as hub_strategy says "
        "and the final model at the end; the token comes from the environment, never the file"
    ),
    "report_to": honoured(
        "metrics.open_sinks (metrics.jsonl always; tensorboard, wandb)",
        warn_if(
            lambda s: bool(_unsupported_reporters(s)),
            lambda s: (
                f"report_to {', '.join(_unsupported_reporters(s))} is not written by grpo_runtime (it "
                "writes tensorboard and wandb); metrics.jsonl has every metric"
            ),
            U_NO_EFFECT,
        ),
        warn_if(
            lambda s: bool(_missing_reporters(s)),
            lambda s: (
                f"report_to {', '.join(_missing_reporters(s))}: its package is not installed, so it is "
                "skipped (pip install it to report there); metrics.jsonl has every metric"
            ),
            U_NO_EFFECT,
        ),
    ),
    "restore_callback_states_from_checkpoint": ignored(
        "restores callbacks' own state; a config adds no stateful callbacks, so TRL 1.16 restores nothing either"
    ),
    "resume_from_checkpoint": honoured("checkpoint.resolve_resume, checkpoint.load_checkpoint"),
    "run_name": honoured("metrics.WandbSink"),
    "save_on_each_node": warned(
        "checkpoints are written once, by the main process: on one machine that is what "
        "TRL does too, across machines output_dir must be shared",
        U_NO_EFFECT,
    ),
    "save_only_model": honoured("checkpoint.save_checkpoint"),
    "save_steps": honoured("recipe.cadence.should_save"),
    "save_strategy": honoured("recipe.cadence.should_save (best: after each evaluation that sets a new best)"),
    "save_total_limit": honoured("checkpoint.prune_checkpoints (keeps the newest and the best checkpoint)"),
    "skip_memory_metrics": warned("memory metrics are not measured by grpo_runtime", U_NO_EFFECT),
    "trackio_bucket_id": ignored(only_with("report_to: trackio", "which is refused")),
    "trackio_space_id": ignored(only_with("report_to: trackio", "which is refused")),
    "trackio_static_space_id": ignored(only_with("report_to: trackio", "which is refused")),
}
