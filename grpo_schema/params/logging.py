"""Logging: when metrics are logged, where they go, and completion logging."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo
from pydantic_core import PydanticCustomError

from grpo_schema.params.base import AreaParams
from grpo_schema.types import NOTES, Float, Int, YamlNoGuard

INTEGRATIONS = ("azure_ml", "comet_ml", "mlflow", "neptune", "tensorboard", "trackio", "wandb", "codecarbon",
                "clearml", "dagshub", "flyte", "dvclive", "swanlab", "kubeflow")
REPORT_TO_WORDS = INTEGRATIONS + ("all", "none")
LOG_LEVELS = ("detail", "debug", "info", "warning", "error", "critical", "passive")
DEBUG_OPTIONS = ("underflow_overflow", "tpu_metrics_debug")

Integration = Literal[REPORT_TO_WORDS]  # type: ignore[valid-type]
NUMERIC_LEVELS = {10: "debug", 20: "info", 30: "warning", 40: "error", 50: "critical"}


def _level_name(value: Any, info: ValidationInfo) -> Any:
    # logging's numbers are a natural thing to write, but transformers looks levels up by name.
    if isinstance(value, int) and not isinstance(value, bool) and value in NUMERIC_LEVELS:
        name = NUMERIC_LEVELS[value]
        if info.context is not None and info.field_name:
            info.context.setdefault(NOTES, []).append(
                (info.field_name, "GRPO-T009", f"write the level name {name!r} instead of {value}; "
                 "transformers fails on a number when the trainer starts", name))
        return name
    return value


LogLevel = Annotated[Literal[LOG_LEVELS], BeforeValidator(_level_name)]  # type: ignore[valid-type]


def _debug_options(value: Any) -> Any:
    # A space-separated string or a list; each word must be a known option ('' means none).
    words = value.split() if isinstance(value, str) else value
    if isinstance(words, list):
        bad = [w for w in words if w not in DEBUG_OPTIONS]
        if bad:
            raise PydanticCustomError("grpo_choice_words", "{bad!r} is not one of {choices}",
                                      {"bad": bad[0], "choices": ", ".join(DEBUG_OPTIONS)})
    return value


class LoggingParams(AreaParams):
    area = "logging"
    title = "Logging"
    summary = "When metrics are logged, to which integrations, and what completions are printed."

    logging_strategy: Annotated[Literal["no", "steps", "epoch"], YamlNoGuard] = Field(
        "steps", description="When to log: every logging_steps optimizer steps, every epoch, or never.")
    logging_steps: Float = Field(
        10, ge=0,
        description="Optimizer steps between logs (GRPO default 10). Below 1 a fraction of the total steps; above "
                    "1 a whole number.")
    logging_first_step: bool = Field(False, description="Also log after the first optimizer step.")
    log_on_each_node: bool = Field(True, description="Log from the main process of every node, not only the first.")
    logging_nan_inf_filter: bool = Field(True, description="Skip NaN/inf losses when averaging the logged loss.")
    include_num_input_tokens_seen: Literal["all", "non_padding", "no"] | bool = Field(
        "no", description="Track the number of input tokens seen: 'all', 'non_padding' or 'no' (true means 'all').")
    log_level: LogLevel = Field(
        "passive", description="Log level of the main process ('passive' keeps the library default).")
    log_level_replica: LogLevel = Field(
        "warning", description="Log level of the other processes.")
    disable_tqdm: bool | None = Field(None, description="Hide progress bars; null decides from the log level.")
    report_to: Integration | list[Integration] | None = Field(
        "none", description="Where to send metrics: 'none', 'all' (every installed integration), one integration "
                            "name or a list, e.g. [wandb, tensorboard].")
    run_name: str | None = Field(None, description="Run name shown by the logging integrations.")
    project: str = Field("huggingface", description="Project name for integrations that use one (e.g. trackio).")
    trackio_space_id: str | None = Field(None, description="trackio: Hugging Face Space that hosts the dashboard.")
    trackio_bucket_id: str | None = Field(None, description="trackio: storage bucket id.")
    trackio_static_space_id: str | Literal[False] | None = Field(
        None, description="trackio: static Space id, or false to disable it.")
    skip_memory_metrics: bool = Field(True, description="Skip memory profiling metrics (they slow training down).")
    debug: Annotated[str | list[str], BeforeValidator(_debug_options)] = Field(
        "", description="transformers debug options: 'underflow_overflow', 'tpu_metrics_debug' (space-separated "
                        "or a list).")
    log_completions: bool = Field(False, description="Log a sample of prompts and completions at each logging step.")
    log_multimodal: bool = Field(True, description="Include images when logging completions of multimodal runs.")
    num_completions_to_print: Int | None = Field(
        None, ge=0, description="How many logged completions to print; null prints all.")
    log_unique_prompts: bool = Field(
        False, description="Log each prompt once instead of once per completion (formerly wandb_log_unique_prompts).")
    log_completions_hub_repo: str | None = Field(
        None, description="Hub dataset repo to push logged completions to; needs log_completions.")
