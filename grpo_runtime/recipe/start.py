"""Starting a run's outputs: log levels, a resumed checkpoint or fresh logs, run_info.json, the resolved config
(grpo_config.yaml) and the metric sinks."""

from __future__ import annotations

import grpo_runtime.outputs.best as best
from grpo_runtime.outputs import completions
from grpo_runtime.outputs.checkpoint import Progress, load_checkpoint, resolve_resume
from grpo_runtime.outputs.health import LiveHealth
from grpo_runtime.outputs.metrics import open_sinks
from grpo_runtime.outputs.reporters import requested_reporters
from grpo_runtime.outputs.run_info import write_run_info
from grpo_runtime.training.parts import Parts


def resume_or_start(config, parts: Parts):
    """The counters and pending generation of resume_from_checkpoint's checkpoint (and that checkpoint), or fresh
    ones: a fresh run starts fresh logs, a resumed one appends to them."""
    progress, buffer = Progress(entropy_coef=config.entropy_coef), None
    resume = resolve_resume(config.resume_from_checkpoint, parts.output_dir)
    if resume is not None:
        progress, buffer = load_checkpoint(
            resume,
            accelerator=parts.accelerator,
            model=parts.model,
            optimizer=parts.optimizer,
            scheduler=parts.scheduler,
            reference=parts.reference if config.sync_ref_model else None,
        )
        best.forget_missing_best(progress)
    else:
        start_fresh_logs(parts)
    return progress, buffer, resume


def open_outputs(config, parts: Parts, resume, start_step: int, health: LiveHealth) -> list:
    """run_info.json, the resolved config and the metric sinks (on the main process), and run health told of a
    resume; returns the sinks every record goes to, run health last."""
    if parts.accelerator.is_main_process:
        write_run_info(
            config, parts, resumed_from=None if resume is None else {"checkpoint": str(resume), "step": start_step}
        )
    if resume is not None:
        health.resumed(resume, start_step, parts.total_steps)
    sinks = []
    if parts.accelerator.is_main_process:
        write_resolved_config(config, parts.output_dir)
        sinks = open_sinks(
            parts.output_dir,
            requested_reporters(config.report_to),
            config.model_dump(mode="json"),
            config.run_name,
            config.project,
        )
    sinks.append(health)
    return sinks


def set_log_levels(config, accelerator) -> None:
    """log_level on the main process (of each machine with log_on_each_node), log_level_replica elsewhere, for
    transformers' and datasets' loggers; "passive" leaves them as they are."""
    import datasets
    import transformers

    main = accelerator.is_local_main_process if config.log_on_each_node else accelerator.is_main_process
    level = config.log_level if main else config.log_level_replica
    if level != "passive":
        number = transformers.utils.logging.log_levels[level]
        transformers.utils.logging.set_verbosity(number)
        datasets.utils.logging.set_verbosity(number)


def start_fresh_logs(parts: Parts) -> None:
    parts.accelerator.wait_for_everyone()
    if parts.accelerator.is_main_process:
        (parts.output_dir / "metrics.jsonl").unlink(missing_ok=True)
        (parts.output_dir / completions.COMPLETIONS_FILE).unlink(missing_ok=True)
        (parts.output_dir / completions.SAMPLE_FILE).unlink(missing_ok=True)
    (parts.output_dir / "prompt_assignment" / f"rank-{parts.rank}.jsonl").unlink(missing_ok=True)
    parts.accelerator.wait_for_everyone()


def write_resolved_config(config, directory) -> None:
    """The config this run used, as a file `grpo validate` and editors accept: every value that differs from TRL
    1.16's default (the others are the defaults), so reading it back gives the same config."""
    import yaml

    from grpo_schema.api.modeline import with_modeline
    from grpo_schema.engine.compiled import compiled

    facts = compiled("config").fields
    values = {name: value for name, value in config.model_dump(mode="json").items() if value != facts[name]["default"]}
    header = "# The config of this run: values that differ from TRL 1.16's defaults (grpo-config).\n"
    text = with_modeline(header + yaml.safe_dump(values, sort_keys=False))
    (directory / "grpo_config.yaml").write_text(text, encoding="utf-8")
