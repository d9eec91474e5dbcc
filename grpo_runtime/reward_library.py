"""The reward functions grpo_runtime ships, under the dotted path configs written before they moved to
grpo_runtime.data.reward_library name them by (`reward_funcs: [grpo_runtime.reward_library.target_word_reward]`)."""

from grpo_runtime.data.reward_library import (
    SoftOverlongPunishment,
    accuracy_reward,
    get_soft_overlong_punishment,
    reasoning_accuracy_reward,
    target_word_reward,
    think_format_reward,
)

__all__ = [
    "SoftOverlongPunishment",
    "accuracy_reward",
    "get_soft_overlong_punishment",
    "reasoning_accuracy_reward",
    "target_word_reward",
    "think_format_reward",
]
