"""Logging, evaluation, checkpoints and the learning-rate schedule arguments."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, RuleContext, rule

# Keyword arguments each transformers scheduler accepts besides the optimizer and step counts.
SCHEDULER_KWARGS: dict[str, tuple[str, ...] | None] = {
    "linear": (),
    "constant": (),
    "constant_with_warmup": (),
    "cosine": ("num_cycles",),
    "cosine_with_restarts": ("num_cycles",),
    "polynomial": ("lr_end", "power"),
    "inverse_sqrt": ("timescale",),
    "cosine_with_min_lr": ("num_cycles", "min_lr", "min_lr_rate"),
    "cosine_warmup_with_min_lr": ("num_cycles", "min_lr", "min_lr_rate", "warmup_lr_rate"),
    "warmup_stable_decay": (
        "num_decay_steps",
        "num_stable_steps",
        "warmup_type",
        "decay_type",
        "min_lr_ratio",
        "num_cycles",
    ),
    "reduce_lr_on_plateau": None,
    "greedy": None,  # forwarded to the torch scheduler: not checked here
}
# Schedules transformers builds without passing lr_scheduler_kwargs on: the kwargs are dropped, not refused.
DROPS_KWARGS = ("constant", "constant_with_warmup")


@rule("GRPO-O001", "error", ("log_completions_hub_repo", "log_completions"))
def hub_completions_need_logging(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """log_completions_hub_repo needs log_completions: true.

    Completions are only pushed to the Hub when they are logged; TRL refuses the combination.
    """
    if config.log_completions_hub_repo is not None and not config.log_completions:
        yield Finding(
            "log_completions_hub_repo is set but log_completions is false",
            ("log_completions_hub_repo", "log_completions"),
            hint="set log_completions: true",
            fix=Fix(set={"log_completions": True}, title="turn on log_completions"),
        )


def _eval_steps(config: Any) -> float | None:
    """eval_steps as TRL uses it: unset, it takes the logging_steps value."""
    return config.logging_steps if config.eval_steps is None else config.eval_steps


def _step_value_problem(name: str, value: float | None) -> str | None:
    if value is not None and value > 1 and not float(value).is_integer():
        return f"{name} ({value:g}) above 1 must be a whole number of steps"
    return None


@rule(
    "GRPO-O002",
    "error",
    ("logging_strategy", "logging_steps", "eval_strategy", "eval_steps", "save_strategy", "save_steps"),
)
def step_intervals_well_formed(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """Step intervals must be positive, and whole numbers above 1.

    logging_steps, eval_steps and save_steps below 1 are fractions of the total steps; above 1 they must be whole.
    logging_steps 0 is refused with logging_strategy 'steps'.
    """
    if config.logging_strategy == "steps" and config.logging_steps == 0:
        yield Finding(
            "logging_steps is 0 with logging_strategy 'steps'",
            ("logging_steps",),
            hint="set logging_steps to 1 or more, or logging_strategy: 'no'",
        )
    for strategy, name in (
        ("logging_strategy", "logging_steps"),
        ("eval_strategy", "eval_steps"),
        ("save_strategy", "save_steps"),
    ):
        value = _eval_steps(config) if name == "eval_steps" else getattr(config, name)
        problem = getattr(config, strategy) == "steps" and _step_value_problem(name, value)
        if problem:
            yield Finding(
                problem,
                (name,),
                hint=f"write {name}: {round(value)}",
                fix=Fix(set={name: round(value)}, safe=False, title="round it"),
            )


@rule(
    "GRPO-O003",
    "error",
    ("load_best_model_at_end", "eval_strategy", "save_strategy", "eval_steps", "save_steps", "logging_steps"),
)
def best_model_needs_matching_strategies(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """load_best_model_at_end needs evaluations at the checkpoints.

    Unless save_strategy is 'best', the save and eval strategies must match, and with 'steps' save_steps must be a
    multiple of eval_steps, so every checkpoint has an evaluation to compare.
    """
    if not config.load_best_model_at_end or config.save_strategy == "best":
        return
    if config.eval_strategy != config.save_strategy:
        yield Finding(
            f"load_best_model_at_end needs save_strategy and eval_strategy to match (save "
            f"'{config.save_strategy}', eval '{config.eval_strategy}')",
            ("load_best_model_at_end", "eval_strategy", "save_strategy"),
            hint=f"set eval_strategy: {config.save_strategy}",
        )
    elif config.save_strategy == "steps":
        eval_steps = _eval_steps(config)
        if eval_steps and (config.save_steps >= 1) != (eval_steps >= 1):
            yield Finding(
                f"save_steps ({config.save_steps:g}) and eval_steps ({eval_steps:g}) mix a ratio of the "
                "run with a number of steps, so load_best_model_at_end cannot be sure every checkpoint "
                "has an evaluation",
                ("save_steps", "eval_steps", "load_best_model_at_end"),
                hint="write both as numbers of steps, or both as ratios",
            )
        elif eval_steps and (config.save_steps % eval_steps):
            yield Finding(
                f"save_steps ({config.save_steps:g}) must be a multiple of eval_steps ({eval_steps:g}) "
                "for load_best_model_at_end",
                ("save_steps", "eval_steps", "load_best_model_at_end"),
                hint=f"set save_steps to a multiple of {eval_steps:g}",
            )


@rule("GRPO-O004", "error", ("save_strategy", "metric_for_best_model", "load_best_model_at_end"))
def best_checkpoint_needs_metric(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """save_strategy 'best' needs metric_for_best_model.

    The trainer must know which metric decides the best checkpoint.
    """
    if config.save_strategy == "best" and config.metric_for_best_model is None and not config.load_best_model_at_end:
        yield Finding(
            "save_strategy 'best' needs metric_for_best_model",
            ("save_strategy", "metric_for_best_model"),
            hint="set metric_for_best_model, e.g. eval_reward",
        )


@rule("GRPO-O005", "error", ("lr_scheduler_type", "eval_strategy"))
def plateau_scheduler_needs_eval(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """reduce_lr_on_plateau and greedy schedules need evaluation.

    They react to an evaluation metric; with eval_strategy 'no' there is none and transformers refuses.
    """
    if config.lr_scheduler_type in ("reduce_lr_on_plateau", "greedy") and config.eval_strategy == "no":
        yield Finding(
            f"lr_scheduler_type {config.lr_scheduler_type} needs evaluation (eval_strategy is 'no')",
            ("lr_scheduler_type", "eval_strategy"),
            hint="set eval_strategy: steps, or another schedule",
        )


@rule("GRPO-O006", "error", ("lr_scheduler_type", "lr_scheduler_kwargs"))
def scheduler_kwargs_known(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """lr_scheduler_kwargs must be arguments the chosen schedule takes.

    Unknown keys fail with a TypeError only when training starts; cosine_with_min_lr needs exactly one of min_lr
    and min_lr_rate.
    """
    accepted = SCHEDULER_KWARGS.get(config.lr_scheduler_type)
    given = config.lr_scheduler_kwargs or {}
    if accepted is None or config.lr_scheduler_type in DROPS_KWARGS:
        return
    for key in given:
        if key not in accepted:
            takes = ", ".join(accepted) or "no extra arguments"
            yield Finding(
                f"lr_scheduler_kwargs.{key} is not an argument of the {config.lr_scheduler_type} schedule "
                f"(it takes {takes})",
                ("lr_scheduler_kwargs",),
                hint=f"remove {key}",
            )
    if "min_lr" in accepted and ("min_lr" in given) == ("min_lr_rate" in given):
        yield Finding(
            f"lr_scheduler_type {config.lr_scheduler_type} needs exactly one of min_lr and min_lr_rate in "
            "lr_scheduler_kwargs",
            ("lr_scheduler_kwargs", "lr_scheduler_type"),
            hint="add lr_scheduler_kwargs: {min_lr_rate: 0.1}",
        )


@rule("GRPO-O007", "error", ("dataloader_num_workers", "dataloader_prefetch_factor"))
def prefetch_needs_workers(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """dataloader_prefetch_factor needs dataloader_num_workers > 0."""
    if config.dataloader_prefetch_factor is not None and config.dataloader_num_workers == 0:
        yield Finding(
            "dataloader_prefetch_factor is set but dataloader_num_workers is 0",
            ("dataloader_prefetch_factor", "dataloader_num_workers"),
            hint="set dataloader_num_workers > 0 or remove dataloader_prefetch_factor",
        )


_KWARGS_SECRETS = ("token", "use_auth_token")


@rule("GRPO-O008", "warning", ("hub_token", "model_init_kwargs"))
def no_token_in_config(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A Hub token is written in the config file (hub_token, or a token in model_init_kwargs).

    Config files end up in version control and logs; log in with `hf auth login` or export HF_TOKEN instead.
    """
    if config.hub_token:
        yield Finding(
            "hub_token is written in the config file",
            ("hub_token",),
            hint="remove it and export HF_TOKEN in the job's environment",
            fix=Fix(unset=("hub_token",), safe=False, title="remove hub_token"),
        )
    for key in _KWARGS_SECRETS:
        if isinstance((config.model_init_kwargs or {}).get(key), str):
            yield Finding(
                f"model_init_kwargs.{key} holds a Hub token written in the config file",
                ("model_init_kwargs",),
                hint="remove it and export HF_TOKEN in the job's environment",
            )


@rule("GRPO-O009", "error", ("eval_strategy", "eval_steps", "logging_steps"))
def eval_steps_resolvable(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """With eval_strategy 'steps', eval_steps (or logging_steps as its fallback) must be positive."""
    if config.eval_strategy == "steps" and not config.eval_steps and not config.logging_steps:
        yield Finding(
            "eval_strategy 'steps' needs eval_steps (logging_steps, its fallback, is 0)",
            ("eval_steps", "eval_strategy"),
            hint="set eval_steps, e.g. 100",
        )


@rule("GRPO-O010", "warning", ("lr_scheduler_type", "lr_scheduler_kwargs"))
def scheduler_kwargs_dropped(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """lr_scheduler_kwargs are ignored by the constant schedules.

    transformers builds 'constant' and 'constant_with_warmup' without passing lr_scheduler_kwargs on, so they
    have no effect (other schedules fail on keys they do not take: GRPO-O006).
    """
    if config.lr_scheduler_type in DROPS_KWARGS and config.lr_scheduler_kwargs:
        keys = ", ".join(config.lr_scheduler_kwargs)
        yield Finding(
            f"lr_scheduler_kwargs ({keys}) are ignored by the {config.lr_scheduler_type} schedule",
            ("lr_scheduler_kwargs", "lr_scheduler_type"),
            hint="remove lr_scheduler_kwargs, or pick a schedule that takes them",
            fix=Fix(unset=("lr_scheduler_kwargs",), safe=False, title="remove lr_scheduler_kwargs"),
        )
