"""Rewards as a user keeps them beside the recipe (written for these tests): one reads a dataset column."""

import re


def answer_in_tags(completions, target, **kwargs):
    texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
    return [
        1.0 if re.search(r"<answer>\s*" + re.escape(str(t)) + r"\s*</answer>", s) else 0.0
        for s, t in zip(texts, target)
    ]


def short_enough(completions, **kwargs):
    return [1.0 if len(str(c)) < 400 else 0.0 for c in completions]
