"""Built-in reward functions, by the names `trl grpo` accepts in `reward_funcs`, plus the demo's reward.

Every function takes keyword arguments the way the trainer calls them (`prompts`, `completions`,
`completion_ids`, and any extra dataset column such as `solution`) and returns one float (or None: "cannot
score") per completion.

Accuracy: when the `math-verify` package is installed, `accuracy_reward` and `reasoning_accuracy_reward` parse
the gold solution and the completion as LaTeX and compare them symbolically, as TRL does. Without it they fall back
to a normalised exact match (documented on `normalise_answer`), which accepts the same answer written the same
way but not equivalent forms such as `0.5` vs `\\frac{1}{2}`. `MATH_VERIFY_AVAILABLE` tells which is in use.
"""

from __future__ import annotations

import importlib.util
import re

MATH_VERIFY_AVAILABLE = importlib.util.find_spec("math_verify") is not None
# math_verify's limit (seconds of wall-clock time) on parsing or comparing one answer, so that a pathological
# answer cannot hang a run; `grpo smoke` raises it, its verdict must not depend on how busy the machine is.
MATH_VERIFY_TIMEOUT_S = 5


def completion_text(completion) -> str:
    """The text of a completion: a plain string, or the content of the single assistant message."""
    return completion if isinstance(completion, str) else completion[0]["content"]


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` in `text`, braces balanced; None if there is none."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 1, start + len("\\boxed{")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j]
    return None


def normalise_answer(text: str) -> str:
    """Fallback answer form: the last \\boxed{} content if any, without `$`, spaces, `\\left`/`\\right`, thin
    spaces, `\\dfrac`/`\\tfrac` (read as `\\frac`), a trailing period, thousands commas in numbers, lowercased."""
    boxed = last_boxed(text)
    answer = boxed if boxed is not None else text
    for token in ("\\left", "\\right", "\\!", "\\,", "\\;", "$"):
        answer = answer.replace(token, "")
    answer = answer.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    answer = re.sub(r"(?<=\d),(?=\d{3}\b)", "", answer)
    return re.sub(r"\s+", "", answer).rstrip(".").lower()


def answers_match(gold: str, content: str) -> float | None:
    """1.0 / 0.0 for a (mis)match, None when the gold answer cannot be read."""
    if MATH_VERIFY_AVAILABLE:
        return _math_verify_match(gold, content)
    expected = normalise_answer(gold)
    if not expected:
        return None
    given = normalise_answer(content)
    try:
        return float(abs(float(given) - float(expected)) <= 1e-9 * max(1.0, abs(float(expected))))
    except ValueError:
        return float(given == expected)


def _math_verify_match(gold: str, content: str) -> float | None:
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import LatexExtractionConfig, parse, verify

    parsed_gold = parse(gold, parsing_timeout=MATH_VERIFY_TIMEOUT_S)
    if not parsed_gold:
        return None
    # the answer must be proper LaTeX; a boxed answer is looked for first
    extraction = LatexExtractionConfig(
        normalization_config=NormalizationConfig(units=True), boxed_match_priority=0, try_extract_without_anchor=False
    )
    parsed = parse(
        content, extraction_config=[extraction], extraction_mode="first_match", parsing_timeout=MATH_VERIFY_TIMEOUT_S
    )
    return float(verify(parsed_gold, parsed, timeout_seconds=MATH_VERIFY_TIMEOUT_S))


def accuracy_reward(completions, solution, **kwargs) -> list[float | None]:
    """1.0 when the completion's answer equals the row's `solution`, else 0.0; None if the solution is unreadable."""
    return [answers_match(gold, completion_text(c)) for c, gold in zip(completions, solution, strict=True)]


def reasoning_accuracy_reward(completions, solution, reasoning_delimiters=None, **kwargs) -> list[float | None]:
    """Like accuracy_reward on the text after the reasoning (after `</think>` by default); 0.0 when the reasoning
    never closes, so unfinished thinking is penalised rather than skipped."""
    delimiters = reasoning_delimiters or ["</think>"]
    rewards = []
    for completion, gold in zip(completions, solution, strict=True):
        text = completion_text(completion)
        closing = next((d for d in delimiters if d in text), None)
        rewards.append(0.0 if closing is None else answers_match(gold, text.split(closing)[-1]))
    return rewards


THINK_FORMAT = re.compile(r"^<think>(?!.*<think>)(.*?)</think>.*$", re.DOTALL | re.MULTILINE)


def think_format_reward(completions, **kwargs) -> list[float]:
    """1.0 when the completion opens with one `<think>...</think>` block, else 0.0."""
    return [1.0 if THINK_FORMAT.match(completion_text(c)) else 0.0 for c in completions]


class SoftOverlongPunishment:
    """DAPO's length penalty: 0 up to `max_len - cache` tokens, then a linear ramp down to -1 at `max_len`, and -1
    beyond. A class rather than a closure so it pickles; its metric name is `soft_overlong_punishment_reward`."""

    __name__ = "soft_overlong_punishment_reward"

    def __init__(self, max_completion_len: int, soft_punish_cache: int):
        self.max_completion_len = max_completion_len
        self.soft_punish_cache = soft_punish_cache

    def __call__(self, completion_ids, **kwargs) -> list[float]:
        start = self.max_completion_len - self.soft_punish_cache
        rewards = []
        for ids in completion_ids:
            if len(ids) <= start:
                rewards.append(0.0)
            elif len(ids) <= self.max_completion_len:
                rewards.append((start - len(ids)) / self.soft_punish_cache)
            else:
                rewards.append(-1.0)
        return rewards


def get_soft_overlong_punishment(max_completion_len: int, soft_punish_cache: int) -> SoftOverlongPunishment:
    return SoftOverlongPunishment(max_completion_len, soft_punish_cache)


def target_word_reward(completions, target, **kwargs) -> list[float]:
    """The demo's task: the share of words in the completion that equal the row's `target` word."""
    rewards = []
    for completion, word in zip(completions, target, strict=True):
        words = completion_text(completion).split()
        rewards.append(words.count(word) / len(words) if words else 0.0)
    return rewards
