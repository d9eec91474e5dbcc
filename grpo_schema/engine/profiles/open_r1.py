"""The open-r1 profile: huggingface/open-r1's script arguments (typed in open_r1_args.py), its reward names
(src/open_r1/rewards.py, get_reward_funcs) and the checks its script makes."""

from __future__ import annotations

from typing import Any, Iterable

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.profiles.profile import Profile

S_DATASET = declare(
    "GRPO-S101",
    "error",
    "open-r1 needs a dataset",
    "open-r1's script arguments require dataset_name or dataset_mixture.",
)
S_MIXTURE_COLUMNS = declare(
    "GRPO-S102",
    "error",
    "open-r1 mixture columns differ",
    "Every entry of an open-r1 dataset_mixture must keep the same columns.",
)

REWARD_FUNCS = (
    "accuracy",
    "format",
    "reasoning_steps",
    "cosine",
    "repetition_penalty",
    "length",
    "code",
    "binary_code",
    "ioi_code",
    "cf_code",
    "code_format",
    "tag_count",
    "soft_overlong_punishment",
    # registered on open-r1's experiment branches (grpo-math-exps, zero-math-code)
    "soft_format",
    "weighted_binary_code_reward",
    "think_format",
    "think_accuracy",
    "think_code_format",
)


def _dataset_source(config: Any, args: Any, raw: dict[str, Any]) -> Iterable[Diagnostic]:
    if config.dataset_name is None and args.dataset_mixture is None and not config.datasets:
        yield Diagnostic(
            S_DATASET,
            "error",
            "open-r1 needs dataset_name or dataset_mixture",
            fields=("dataset_name",),
            hint="set dataset_name (or a dataset_mixture)",
        )


def _mixture_columns(config: Any, args: Any, raw: dict[str, Any]) -> Iterable[Diagnostic]:
    mixture = args.dataset_mixture
    if mixture is None:
        return
    column_sets = [tuple(sorted(d.columns)) for d in mixture.datasets if d.columns is not None]
    if len(set(column_sets)) > 1:
        yield Diagnostic(
            S_MIXTURE_COLUMNS,
            "error",
            "the datasets of dataset_mixture keep different columns: "
            + " vs ".join(str(list(c)) for c in dict.fromkeys(column_sets)),
            fields=("dataset_mixture",),
            hint="keep the same columns in every mixture entry",
        )


OPEN_R1 = Profile(
    name="open-r1",
    description="huggingface/open-r1 (src/open_r1/grpo.py): its GRPOConfig and GRPOScriptArguments",
    script_args="grpo_schema.engine.profiles.open_r1_args:OpenR1ScriptArgs",
    compiled_key="open-r1",
    reward_funcs=REWARD_FUNCS,
    default_reward_funcs=("accuracy", "format", "tag_count"),
    # Its GRPOScriptArguments read reward_funcs at every pin (trl@main in January 2025, 0.16.0, the 0.17 commits,
    # 0.18.0), looked up in its own registry (a KeyError for any other name).
    script_reads=frozenset({"reward_funcs"}),
    # ["accuracy", "format"] while it pinned TRL's main up to 2025-02-22 (0.14-0.15); tag_count joined the defaults
    # with the pin of 2025-02-26 (TRL 0.16's development) and stayed.
    default_reward_funcs_by_release=(
        ("0.14.0", ("accuracy", "format")),
        ("0.16.0", ("accuracy", "format", "tag_count")),
    ),
    reward_equivalents={
        "accuracy_reward": "accuracy",
        "reasoning_accuracy_reward": "accuracy",
        "think_format_reward": "format",
        "get_soft_overlong_punishment": "soft_overlong_punishment",
    },
    checks=(_dataset_source, _mixture_columns),
)
