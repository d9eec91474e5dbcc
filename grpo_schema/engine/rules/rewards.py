"""Rewards: names the script can resolve, weights per source, and normalisation settings."""

from __future__ import annotations

import re
from typing import Any, Iterator

from grpo_schema.engine.closematch import prepared
from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.profiles import known_profiles
from grpo_schema.engine.rules import Finding, RuleContext, explicitly_set, rule
from grpo_schema.engine.words import plural

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def reward_funcs_in_force(config: Any, ctx: RuleContext) -> list[str]:
    """The config's reward_funcs, else the default of the script the config is for (an active profile's, or that
    of the known project whose keys the file carries); TRL's own script has none."""
    if config.reward_funcs is not None:
        return list(config.reward_funcs)
    if ctx.default_reward_funcs is not None:
        return list(ctx.default_reward_funcs)
    profiles = known_profiles()
    return next(
        (
            list(profiles[name].default_reward_funcs)
            for name in ctx.foreign_profiles
            if name in profiles and profiles[name].default_reward_funcs is not None
        ),
        [],
    )


def _item(index: int) -> tuple[str, str]:
    """Fields of a finding about one reward_funcs entry: the item (where it is shown), then the list."""
    return (f"reward_funcs[{index}]", "reward_funcs")


def reward_sources(config: Any, ctx: RuleContext) -> list[str]:
    """Reward sources in the order weights apply: the reward model first, then the functions."""
    model = [config.reward_model_name_or_path] if config.reward_model_name_or_path else []
    return model + reward_funcs_in_force(config, ctx)


@rule("GRPO-R001", "error", ("reward_weights", "reward_funcs", "reward_model_name_or_path"))
def one_weight_per_reward_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """reward_weights needs exactly one weight per reward source.

    Sources are the reward model (reward_model_name_or_path, when set) followed by each entry of reward_funcs.
    TRL only finds a mismatch when the trainer starts.
    """
    weights = config.reward_weights
    if weights is None:  # most configs: no weights to count
        return
    sources = reward_sources(config, ctx)
    if len(weights) != len(sources):
        names = ", ".join(sources) or "none"
        yield Finding(
            f"reward_weights has {plural(len(weights), 'weight')} but there "
            f"{'is' if len(sources) == 1 else 'are'} {plural(len(sources), 'reward source')} ({names})",
            ("reward_weights", "reward_funcs"),
            hint=f"give {plural(len(sources), 'weight')}, one per source in this order: {names}",
        )


MAX_LIST_IN_FIX = 64


def _owner(name: str, ctx: RuleContext) -> str | None:
    """The inactive profile whose registry knows `name`, if any."""
    return next(
        (p.name for p in known_profiles().values() if name in p.reward_funcs and p.name not in ctx.profile_names), None
    )


def _unresolved_names(config: Any, ctx: RuleContext, foreign: bool) -> Iterator[Finding]:
    first = {}
    for index, name in enumerate(config.reward_funcs or []):
        first.setdefault(name, index)
    for name, index in first.items():  # each distinct name once, at its first entry; its fix replaces every copy
        if name in ctx.reward_names or ("." in name and ctx.allows_dotted_rewards):
            continue
        owner = _owner(name, ctx)
        # For another script or not is decided by the name alone: a name a known project registers (and no active
        # profile does) is a warning; any other unknown name is an error, whatever else the file holds.
        if (owner is not None) != foreign:
            continue
        known = ", ".join(sorted(ctx.reward_names)) or "none"
        match = prepared(frozenset(ctx.reward_names)).close_matches(name, n=1, cutoff=0.6)  # = difflib's
        if owner:
            hint = f"{name!r} is a reward of {owner}: validate with --profile {owner}"
        else:
            hint = (
                f"did you mean {match[0]}?"
                if match
                else f"use one of {known}"
                + (", or a dotted import path 'module.function'" if ctx.allows_dotted_rewards else "")
            )
        where = (
            "the active profile's registry"
            if ctx.profile_names
            else f"TRL {ctx.trl_release}'s built-ins"
            if ctx.trl_release
            else "TRL's built-ins"
        )
        fix = None
        # The fix sets the whole list: offered for lists of a plausible length only, so that a list of thousands
        # of misspellings does not answer with thousands of copies of itself.
        if match and not owner and len(config.reward_funcs) <= MAX_LIST_IN_FIX:
            fixed = [match[0] if item == name else item for item in config.reward_funcs]
            fix = Fix(set={"reward_funcs": fixed}, safe=False, title=f"use {match[0]}")
        yield Finding(
            f"reward function {name!r} is neither one of {where} ({known})"
            + (" nor a dotted import path" if ctx.allows_dotted_rewards else ""),
            _item(index),
            hint=hint,
            fix=fix,
        )


@rule("GRPO-R002", "error", ("reward_funcs",))
def reward_names_resolve(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Every reward function name must be known to the script's registry (or be a dotted import path).

    TRL's `trl grpo` resolves accuracy_reward, reasoning_accuracy_reward, think_format_reward and
    get_soft_overlong_punishment, or imports 'module.function'. A profile (e.g. open-r1) brings its own names.
    Dotted paths are only checked for form; they are never imported during validation.
    """
    yield from _unresolved_names(config, ctx, foreign=False)


@rule("GRPO-R007", "error", ("reward_funcs",))
def reward_names_of_another_script(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A reward name of another project's registry, which `trl grpo` cannot resolve.

    The name belongs to a known project's registry (open-r1's 'format', ...), so the config is probably meant for
    that project's script: validate with its profile (--profile open-r1) to check the names against it. `trl grpo`
    itself refuses the name, as it refuses any other unknown one (GRPO-R002), whatever else the file holds.
    """
    yield from _unresolved_names(config, ctx, foreign=True)


@rule("GRPO-R003", "error", ("reward_funcs",))
def dotted_reward_paths_well_formed(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A dotted reward path must look like 'package.module.function'.

    The script imports everything before the last dot as a module and takes the last part as the function.
    """
    for index, name in enumerate(config.reward_funcs or []):
        if "." in name and name not in ctx.reward_names and ctx.allows_dotted_rewards and not _DOTTED.match(name):
            yield Finding(
                f"reward function path {name!r} is not of the form 'module.function'",
                _item(index),
                hint="use Python identifiers separated by dots, e.g. my_rewards.length_penalty",
            )


@rule("GRPO-R004", "error", ("reward_funcs", "reward_model_name_or_path"))
def some_reward_source(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """No reward function or reward model is configured.

    `trl grpo` builds the trainer with an empty reward list, which GRPOTrainer refuses when it starts. (A profile
    whose script has default rewards, such as open-r1's, supplies them.) A file without model_name_or_path reads as
    GRPOConfig arguments for a Python script: GRPO-S006 says what `trl grpo` would still need.
    """
    if not reward_sources(config, ctx) and config.model_name_or_path is not None:
        # a name the judged release's script resolves (0.19's registers think_format_reward alone)
        example = "accuracy_reward" if "accuracy_reward" in ctx.reward_names else min(ctx.reward_names, default=None)
        hint = (
            f"add reward_funcs: [{example}] (or your own 'module.function')"
            if example
            else "add reward_funcs: [your own 'module.function'], or set reward_model_name_or_path"
        )
        yield Finding(
            "no reward_funcs and no reward_model_name_or_path: `trl grpo` has nothing to score with",
            ("reward_funcs",),
            hint=hint,
        )


@rule("GRPO-R005", "warning", ("multi_objective_aggregation", "scale_rewards"))
def scale_rewards_ignored_by_gdpo(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """scale_rewards is ignored with normalize_then_sum.

    GDPO normalises each reward per group and the sum over the batch; scale_rewards then has no effect.
    """
    if config.multi_objective_aggregation == "normalize_then_sum" and explicitly_set(ctx, "scale_rewards"):
        yield Finding(
            "scale_rewards has no effect with multi_objective_aggregation normalize_then_sum",
            ("scale_rewards", "multi_objective_aggregation"),
            hint="remove scale_rewards",
        )


@rule("GRPO-R006", "warning", ("reward_funcs",))
def reward_funcs_unique(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A reward function is listed twice.

    Each entry is a separate reward source, so a repeated name counts that reward twice in the sum.
    """
    seen: set[str] = set()
    for index, name in enumerate(config.reward_funcs or []):
        if name in seen:
            yield Finding(
                f"reward function {name!r} is listed twice and will be counted twice",
                _item(index),
                hint="list it once and give it a larger reward_weights entry instead",
            )
        seen.add(name)
