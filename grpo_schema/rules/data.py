"""Datasets: where prompts come from, mixtures and streaming."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.rules import Finding, RuleContext, rule


@rule("GRPO-S001", "warning", ("datasets", "dataset_name"))
def one_dataset_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Both datasets and dataset_name are set; the mixture wins and dataset_name is ignored."""
    if config.datasets and config.dataset_name:
        yield Finding(f"dataset_name ({config.dataset_name}) is ignored because datasets is set",
                      ("dataset_name", "datasets"), hint="remove dataset_name, or the datasets mixture")


@rule("GRPO-S002", "warning", ("datasets", "dataset_name"))
def some_dataset_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """No dataset is configured.

    `trl grpo` needs dataset_name or a datasets mixture; a Python script may pass its dataset to the trainer itself.
    """
    if not config.datasets and not config.dataset_name and not ctx.profile_names:
        yield Finding("no dataset_name and no datasets: `trl grpo` has no prompts to train on", ("dataset_name",),
                      hint="set dataset_name (a Hub id or local path)")


@rule("GRPO-S003", "error", ("datasets", "streaming"))
def fractions_all_or_none(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """fraction must be set on every dataset of the mixture or on none, and not with streaming."""
    with_fraction = [i for i, d in enumerate(config.datasets) if d.fraction is not None]
    if with_fraction and len(with_fraction) != len(config.datasets):
        missing = [i for i in range(len(config.datasets)) if i not in with_fraction]
        yield Finding(f"fraction is set on some datasets but not on datasets[{missing[0]}]",
                      tuple(f"datasets[{i}].fraction" for i in with_fraction[:1]) + ("datasets",),
                      hint="set fraction on every entry, or on none")
    if with_fraction and config.streaming:
        yield Finding("fraction cannot be used with streaming", (f"datasets[{with_fraction[0]}].fraction", "streaming"),
                      hint="remove fraction, or set streaming: false")


@rule("GRPO-S004", "error", ("datasets", "dataset_name", "streaming", "dataset_streaming", "max_steps"))
def streaming_needs_max_steps(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A streamed dataset has no length, so max_steps must be set.

    Without a length the number of optimizer steps per epoch is unknown; transformers refuses max_steps -1.
    """
    streaming = (config.streaming and config.datasets) or (config.dataset_streaming and not config.datasets)
    if streaming and config.max_steps <= 0:
        name = "streaming" if config.datasets else "dataset_streaming"
        yield Finding(f"{name} is true but max_steps is {config.max_steps}: a streamed dataset has no length",
                      ("max_steps", name), hint="set max_steps to the number of optimizer steps to run")


@rule("GRPO-S005", "warning", ("eval_strategy", "datasets", "test_split_size"))
def mixture_eval_needs_test_split(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Evaluating a datasets mixture needs a test split.

    A mixture only has a test split when test_split_size holds part of it out.
    """
    if config.eval_strategy != "no" and config.datasets and config.test_split_size is None:
        yield Finding("eval_strategy is on but the datasets mixture has no test split (test_split_size is null)",
                      ("test_split_size", "eval_strategy"), hint="set test_split_size, e.g. 0.05")


@rule("GRPO-S006", "warning", ("model_name_or_path",))
def model_is_named(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """No model_name_or_path: `trl grpo` needs the model to train."""
    if config.model_name_or_path is None:
        yield Finding("model_name_or_path is not set; `trl grpo` needs it", ("model_name_or_path",),
                      hint="set model_name_or_path to a Hub id or local path")
