"""Rewards: where they come from and how they become advantages."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import FloatList, ScaleAlias, StrList

ScaleRewards = Annotated[Literal["group", "batch", "none"] | bool, ScaleAlias]


class RewardParams(AreaParams):
    area = "rewards"
    title = "Rewards"
    summary = "Reward functions and models, their weights, and how rewards are normalised into advantages."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "multi_objective_aggregation": {
            "sum_then_normalize": "Weighted sum of the rewards, then one group normalisation (standard GRPO).",
            "normalize_then_sum": "GDPO: normalise each reward within its group, sum with the weights, then "
            "normalise over the batch. scale_rewards has no effect.",
        },
        "scale_rewards": {
            "group": "Divide each advantage by the reward std of its group (original GRPO).",
            "batch": "Divide by the reward std of the whole generation batch (more stable with few completions).",
            "none": "No division: advantage = reward - group mean (Dr. GRPO; no difficulty bias).",
            True: "Legacy spelling of 'group'.",
            False: "Legacy spelling of 'none'.",
        },
    }

    reward_funcs: StrList | None = Field(
        None,
        examples=[["accuracy_reward", "think_format_reward"]],
        description="Reward functions by name: a built-in of the active registry (TRL's script: accuracy_reward, "
        "reasoning_accuracy_reward, think_format_reward, get_soft_overlong_punishment) or a dotted "
        "import path 'module.function'. Always a list, even for one function.",
    )
    reward_model_name_or_path: str | None = Field(
        None,
        examples=["my-org/reward-model"],
        description="A sequence-classification model (one output) used as an extra reward, counted before the "
        "reward functions.",
    )
    reward_weights: FloatList | None = Field(
        None,
        examples=[[1.0, 0.5]],
        description="One weight per reward source (reward model first, then reward_funcs in order). null weighs "
        "each 1.0.",
    )
    multi_objective_aggregation: Literal["sum_then_normalize", "normalize_then_sum"] = Field(
        "sum_then_normalize",
        description="'sum_then_normalize': weighted sum, then normalise per group. 'normalize_then_sum' (GDPO): "
        "normalise each reward per group, sum, then normalise over the batch; ignores scale_rewards.",
    )
    scale_rewards: ScaleRewards = Field(
        "group",
        description="Divide advantages by the reward std of the group ('group'), of the whole batch ('batch') or "
        "not at all ('none', Dr. GRPO). true and false are the legacy spellings of 'group' and 'none'.",
    )
