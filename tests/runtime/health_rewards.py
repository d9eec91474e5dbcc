"""Reward functions for the run-health tests: each makes one pathology on purpose (imported by dotted path)."""

import random


def constant_reward(completions, **kwargs):
    """The same score for every completion: every group is flat."""
    return [1.0] * len(completions)


def patchy_reward(completions, **kwargs):
    """A real score, but None for every 4th completion and NaN for every 5th (a parse that fails, a 0/0)."""
    out = []
    for i, completion in enumerate(completions):
        text = completion[0]["content"] if isinstance(completion, list) else completion
        value = text.split().count("star") / max(len(text.split()), 1)
        out.append(None if i % 4 == 3 else float("nan") if i % 5 == 4 else value)
    return out


def noise_reward(completions, **kwargs):
    """A score that varies in every group but that no policy can raise (the answer is cut before it ends)."""
    rng = random.Random(len(completions) + sum(len(str(c)) for c in completions))
    return [rng.random() for _ in completions]
