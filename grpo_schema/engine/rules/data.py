"""Datasets: where prompts come from, mixtures and streaming."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.rules import Finding, RuleContext, rule


@rule("GRPO-S001", "warning", ("datasets", "dataset_name"))
def one_dataset_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Both datasets and dataset_name are set; the mixture wins and dataset_name is ignored."""
    if config.datasets and config.dataset_name:
        yield Finding(
            f"dataset_name ({config.dataset_name}) is ignored because datasets is set",
            ("dataset_name", "datasets"),
            hint="remove dataset_name, or the datasets mixture",
        )


@rule("GRPO-S002", "error", ("datasets", "dataset_name"))
def some_dataset_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """No dataset is configured.

    `trl grpo` needs dataset_name or a non-empty datasets mixture and refuses to start without either (an empty
    `datasets: []` counts as none). A profile's script checks its own dataset keys. A file without
    model_name_or_path reads as GRPOConfig arguments for a Python script: GRPO-S006 says what `trl grpo` would still
    need.
    """
    if not config.datasets and not config.dataset_name and not ctx.profile_names and config.model_name_or_path:
        listed = "datasets" in ctx.explicit
        yield Finding(
            f"no dataset_name and no datasets{' (datasets is an empty list)' if listed else ''}: "
            "`trl grpo` has no prompts to train on",
            ("datasets",) if listed else ("dataset_name",),
            hint="set dataset_name (a Hub id or local path), or list the mixture under datasets",
        )


@rule("GRPO-S003", "error", ("datasets", "streaming"))
def fractions_all_or_none(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """fraction must be set on every dataset of the mixture or on none, and not with streaming."""
    with_fraction = [i for i, d in enumerate(config.datasets) if d.fraction is not None]
    if with_fraction and len(with_fraction) != len(config.datasets):
        missing = [i for i in range(len(config.datasets)) if i not in with_fraction]
        yield Finding(
            f"fraction is set on some datasets but not on datasets[{missing[0]}]",
            tuple(f"datasets[{i}].fraction" for i in with_fraction[:1]) + ("datasets",),
            hint="set fraction on every entry, or on none",
        )
    if with_fraction and config.streaming:
        yield Finding(
            "fraction cannot be used with streaming",
            (f"datasets[{with_fraction[0]}].fraction", "streaming"),
            hint="remove fraction, or set streaming: false",
        )


@rule("GRPO-S004", "error", ("datasets", "dataset_name", "streaming", "dataset_streaming", "max_steps"))
def streaming_needs_max_steps(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A streamed dataset has no length, so max_steps must be set.

    Without a length the number of optimizer steps per epoch is unknown; transformers refuses max_steps -1.
    """
    streaming = (config.streaming and config.datasets) or (config.dataset_streaming and not config.datasets)
    if streaming and config.max_steps <= 0:
        name = "streaming" if config.datasets else "dataset_streaming"
        yield Finding(
            f"{name} is true but max_steps is {config.max_steps}: a streamed dataset has no length",
            ("max_steps", name),
            hint="set max_steps to the number of optimizer steps to run",
        )


@rule("GRPO-S005", "warning", ("eval_strategy", "datasets", "test_split_size"))
def mixture_eval_needs_test_split(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Evaluating a datasets mixture needs a test split.

    A mixture only has a test split when test_split_size holds part of it out.
    """
    if config.eval_strategy != "no" and config.datasets and config.test_split_size is None:
        yield Finding(
            "eval_strategy is on but the datasets mixture has no test split (test_split_size is null)",
            ("test_split_size", "eval_strategy"),
            hint="set test_split_size, e.g. 0.05",
        )


@rule("GRPO-S006", "warning", ("model_name_or_path",))
def model_is_named(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """No model_name_or_path: `trl grpo` needs the model to train.

    Without it the file reads as GRPOConfig arguments for a Python script (which passes the model, dataset and
    rewards to the trainer itself), so a missing dataset or reward source is listed here rather than refused.
    """
    if config.model_name_or_path is None:
        from grpo_schema.engine.rules.rewards import reward_sources

        missing = ["model_name_or_path"]
        if not config.datasets and not config.dataset_name and not ctx.profile_names:
            missing.append("dataset_name (or datasets)")
        if not reward_sources(config, ctx):
            missing.append("reward_funcs")
        needs = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        yield Finding(
            f"{needs} {'is' if len(missing) == 1 else 'are'} not set; `trl grpo` needs "
            f"{'it' if len(missing) == 1 else 'them'} (without them this reads as GRPOConfig arguments "
            "for a Python script)",
            ("model_name_or_path",),
            hint="set model_name_or_path to a Hub id or local path"
            + (", plus the dataset and reward_funcs" if len(missing) > 1 else ""),
        )


@rule("GRPO-S007", "error", ("datasets", "streaming", "test_split_size"))
def streamed_mixture_cannot_split(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A streamed datasets mixture cannot hold out a test split.

    test_split_size splits the combined mixture with train_test_split, which a streamed (iterable) dataset does
    not have: the script fails after loading the data.
    """
    if config.datasets and config.streaming and config.test_split_size is not None:
        yield Finding(
            f"test_split_size ({config.test_split_size:g}) cannot split a streamed mixture (streaming: true)",
            ("test_split_size", "streaming"),
            hint="remove test_split_size (list a separate eval split instead), or set streaming: false",
        )


def _loading_scripts(config: Any) -> Iterator[tuple[str, str]]:
    """(field, path) of every dataset source that names a Python loading script."""
    if config.dataset_name and not config.datasets and config.dataset_name.rstrip("/").endswith(".py"):
        yield "dataset_name", config.dataset_name
    for index, entry in enumerate(config.datasets or []):
        if entry.path.rstrip("/").endswith(".py"):
            yield f"datasets[{index}].path", entry.path


@rule("GRPO-S008", "error", ("datasets", "dataset_name"))
def no_loading_scripts(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A dataset given as a Python loading script (a path ending in .py).

    datasets 4 dropped loading scripts: load_dataset raises "Dataset scripts are no longer supported" for any path
    ending in .py, local or on the Hub. Convert the data to files (JSON Lines, Parquet) or a Hub dataset without a
    script.
    """
    for name, path in _loading_scripts(config):
        yield Finding(
            f"{name} ({path}) is a dataset loading script, which the datasets library no longer runs",
            (name,),
            hint="point it at the data files (e.g. path: json with data_files) or a Hub dataset that has no script",
        )
