"""Logging: when metrics are logged, where they go, and completion logging."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import BoolParsedOption, DebugOptions, Float, Int, LevelName, YamlNoGuard

INTEGRATIONS = (
    "azure_ml",
    "comet_ml",
    "mlflow",
    "neptune",
    "tensorboard",
    "trackio",
    "wandb",
    "codecarbon",
    "clearml",
    "dagshub",
    "flyte",
    "dvclive",
    "swanlab",
    "kubeflow",
)
REPORT_TO_WORDS = INTEGRATIONS + ("all", "none")
LOG_LEVELS = ("detail", "debug", "info", "warning", "error", "critical", "passive")
LOG_LEVEL_DOCS = {
    "detail": "Everything, even below debug.",
    "debug": "Debug messages and above.",
    "info": "Progress information and above.",
    "warning": "Warnings and errors (transformers' default for the main process).",
    "error": "Errors only.",
    "critical": "Critical errors only.",
    "passive": "Keep the level the libraries set themselves.",
}
Integration = Literal[REPORT_TO_WORDS]  # type: ignore[valid-type]
LogLevel = Annotated[Literal[LOG_LEVELS], LevelName]  # type: ignore[valid-type]


class LoggingParams(AreaParams):
    area = "logging"
    title = "Logging"
    summary = "When metrics are logged, to which integrations, and what completions are printed."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "logging_strategy": {
            "no": "Never log.",
            "steps": "Log every logging_steps optimizer steps.",
            "epoch": "Log at the end of every epoch.",
        },
        "include_num_input_tokens_seen": {
            "all": "Count every input token, padding included.",
            "non_padding": "Count input tokens without padding.",
            "no": "Do not count input tokens.",
            True: "Legacy spelling of 'all'.",
            False: "Legacy spelling of 'no'.",
        },
        "log_level": LOG_LEVEL_DOCS,
        "log_level_replica": LOG_LEVEL_DOCS,
    }

    logging_strategy: Annotated[Literal["no", "steps", "epoch"], YamlNoGuard] = Field(
        "steps", description="When to log: every logging_steps optimizer steps, every epoch, or never."
    )
    logging_steps: Float = Field(
        10,
        ge=0,
        description="Optimizer steps between logs (GRPO default 10). Below 1 a fraction of the total steps; above "
        "1 a whole number.",
    )
    logging_first_step: bool = Field(False, description="Also log after the first optimizer step.")
    log_on_each_node: bool = Field(True, description="Log from the main process of every node, not only the first.")
    logging_nan_inf_filter: bool = Field(True, description="Skip NaN/inf losses when averaging the logged loss.")
    include_num_input_tokens_seen: Annotated[Literal["all", "non_padding", "no"] | bool, BoolParsedOption] = Field(
        "no", description="Track the number of input tokens seen: 'all', 'non_padding' or 'no' (true means 'all')."
    )
    log_level: LogLevel = Field(
        "passive", description="Log level of the main process ('passive' keeps the library default)."
    )
    log_level_replica: LogLevel = Field("warning", description="Log level of the other processes.")
    disable_tqdm: bool | None = Field(None, description="Hide progress bars; null decides from the log level.")
    report_to: Integration | list[Integration] | None = Field(
        "none",
        description="Where to send metrics: 'none', 'all' (every installed integration), one integration "
        "name or a list, e.g. [wandb, tensorboard].",
    )
    run_name: str | None = Field(
        None, examples=["qwen-0.5b-grpo"], description="Run name shown by the logging integrations."
    )
    project: str = Field("huggingface", description="Project name for integrations that use one (e.g. trackio).")
    trackio_space_id: str | None = Field(None, description="trackio: Hugging Face Space that hosts the dashboard.")
    trackio_bucket_id: str | None = Field(None, description="trackio: storage bucket id.")
    trackio_static_space_id: str | Literal[False] | None = Field(
        None, description="trackio: static Space id, or false to disable it."
    )
    skip_memory_metrics: bool = Field(True, description="Skip memory profiling metrics (they slow training down).")
    debug: Annotated[str | list[str], DebugOptions] = Field(
        "",
        description="transformers debug options: 'underflow_overflow', 'tpu_metrics_debug' (space-separated "
        "or a list).",
    )
    log_completions: bool = Field(False, description="Log a sample of prompts and completions at each logging step.")
    log_multimodal: bool = Field(True, description="Include images when logging completions of multimodal runs.")
    num_completions_to_print: Int | None = Field(
        None, ge=0, description="How many logged completions to print; null prints all."
    )
    log_unique_prompts: bool = Field(
        False, description="Log each prompt once instead of once per completion (formerly wandb_log_unique_prompts)."
    )
    log_completions_hub_repo: str | None = Field(
        None,
        examples=["my-org/grpo-completions"],
        description="Hub dataset repo to push logged completions to; needs log_completions.",
    )
