"""Stand-ins for the rewards open-r1 registers only on its experiment branches, for `grpo smoke` alone.

Recipes of those branches (grpo-math-exps, zero-math-code) name rewards whose code is not in open-r1's main branch
and so not here; `grpo train` refuses them. A smoke of such a recipe is still worth having: the model, the data,
the schedule, the loss and the checkpoint are the recipe's own. So the smoke scores each such reward with a
stand-in of the same kind (a format check for a format reward, main's accuracy after the thinking for
think_accuracy, main's binary code reward for the weighted one), reads the same columns, and says in its report
that the scores are a stand-in's. Nothing here claims to be the branch's definition.
"""

from __future__ import annotations

import re

from grpo_runtime.data.reward_library import answers_match, completion_text

THINK_THEN_ANSWER = re.compile(r"<think>.*?</think>\s*<answer>.*?</answer>", re.DOTALL)
CLOSED_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def soft_format_stand_in(completions, **kwargs) -> list[float]:
    """1.0 when a closed <think> block is followed by a closed <answer> block, anywhere, whitespace free."""
    return [1.0 if THINK_THEN_ANSWER.search(completion_text(c)) else 0.0 for c in completions]


def think_format_stand_in(completions, **kwargs) -> list[float]:
    """1.0 when the completion holds a closed <think> block."""
    return [1.0 if CLOSED_THINK.search(completion_text(c)) else 0.0 for c in completions]


def think_accuracy_stand_in(completions, solution, **kwargs) -> list[float | None]:
    """main's accuracy, on the text after the last </think> (all of it when there is none)."""
    answers = [completion_text(c).rpartition("</think>")[2] for c in completions]
    return [answers_match(gold, text) for text, gold in zip(answers, solution, strict=True)]


def stand_ins(main: dict) -> dict:
    """{branch reward name: factory(args) -> reward function}, as open-r1's registry is written; `main` is open-r1's
    main-branch registry (passed in, so this module needs nothing of open_r1's). Each function built carries
    `stand_in_for` (the name it stands in for), so the smoke's report can tell it apart."""
    made = {
        "soft_format": lambda args: soft_format_stand_in,
        "think_format": lambda args: think_format_stand_in,
        "think_accuracy": lambda args: think_accuracy_stand_in,
        "think_code_format": main["code_format"],
        "weighted_binary_code_reward": main["binary_code"],
    }
    return {name: _tagged(name, factory) for name, factory in made.items()}


def _tagged(name: str, factory):
    def build(args):
        func = factory(args)
        func.stand_in_for = name
        return func

    return build


DESCRIPTIONS = {
    "soft_format": "a loose <think>...</think> <answer>...</answer> check",
    "think_format": "a closed <think> block check",
    "think_accuracy": "main's accuracy after the last </think>",
    "think_code_format": "main's code_format",
    "weighted_binary_code_reward": "main's binary_code",
}
