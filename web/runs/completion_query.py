"""Which completion rows a completions page shows, and in what order: the view's filters and sort, applied to every
row of the step on the service (never to the rows a browser has loaded), and the best and worst of each group.

A group is a run of consecutive rows of one step with the same prompt (the completions of one prompt). Sorting keeps
groups whole: groups are ordered by their best row (highest first; lowest first for an ascending sort), and the rows
of each group by the same key, so the step's best completions come first, beside the rest of their group. Rows
without the value sorted by come last; ties keep the file's order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

# file order; the total reward highest or lowest first; advantage, length or one reward function highest first
SORT_PATTERN = r"^(order|reward-desc|reward-asc|advantage-desc|length-desc|fn:.{1,200})$"
MAX_SEARCH_CHARS = 500


class Facts(NamedTuple):
    """What a row is filtered, sorted and marked by, kept in the file's index (no line is read for them)."""

    group: int
    reward: float | None
    advantage: float | None
    length: int | None
    truncated: bool | None
    rewards: dict


def _number(value) -> float | None:
    return value if isinstance(value, (int, float)) and not math.isnan(value) else None


def score(facts: Facts, function: str | None) -> float | None:
    """The total reward, or one reward function's score."""
    return _number(facts.rewards.get(function) if function else facts.reward)


@dataclass(frozen=True)
class Query:
    sort: str = "order"
    score: str | None = None  # the reward function `min_score` and the marks read; None: the total reward
    min_score: float | None = None
    truncated_only: bool = False
    text: str = ""  # rows whose prompt or completion contains it (case-insensitive)

    @property
    def filters(self) -> bool:
        return self.min_score is not None or self.truncated_only or bool(self.text)

    def sort_key(self) -> tuple[Callable[[Facts], float | None], bool]:
        """The value sorted by, and whether highest first."""
        if self.sort.startswith("fn:"):
            name = self.sort[3:]
            return (lambda f: score(f, name)), True
        name, _, direction = self.sort.partition("-")
        if name == "length":
            return (lambda f: f.length), True
        if name == "advantage":
            return (lambda f: _number(f.advantage)), True
        return (lambda f: score(f, None)), direction != "asc"


def matches(facts: Facts, query: Query) -> bool:
    """The filters a row's facts decide (the text search reads the row)."""
    if query.truncated_only and facts.truncated is not True:
        return False
    if query.min_score is not None:
        value = score(facts, query.score)
        return value is not None and value >= query.min_score
    return True


def select(
    rows: Sequence[int], facts: Sequence[Facts], query: Query, texts: Callable[[int], tuple[str, str]]
) -> list[int]:
    """The rows (indexes into the file's rows) the query shows, in the order shown."""
    chosen = [r for r in rows if matches(facts[r], query)]
    if query.text:
        needle = query.text.casefold()
        chosen = [r for r in chosen if any(needle in text.casefold() for text in texts(r))]
    return chosen if query.sort == "order" else sort_groups(chosen, facts, query)


def sort_groups(rows: list[int], facts: Sequence[Facts], query: Query) -> list[int]:
    key, descending = query.sort_key()
    groups: dict[int, list[int]] = {}
    for row in rows:  # in file order: each group's rows, the groups in the order they begin
        groups.setdefault(facts[row].group, []).append(row)

    def ranked(values: list[int]) -> list[int]:  # rows with the value first (by it), then the others, stably
        have = [r for r in values if key(facts[r]) is not None]
        have.sort(key=lambda r: key(facts[r]), reverse=descending)
        return have + [r for r in values if key(facts[r]) is None]

    ordered = [ranked(members) for members in groups.values()]
    with_value = [g for g in ordered if key(facts[g[0]]) is not None]
    with_value.sort(key=lambda g: key(facts[g[0]]), reverse=descending)
    return [row for group in with_value + [g for g in ordered if key(facts[g[0]]) is None] for row in group]


def mark(row: int, facts: Sequence[Facts], members: Sequence[int], function: str | None) -> str | None:
    """ "best" or "worst" when the row has its group's highest or lowest score (of two or more, not all equal)."""
    values = [v for m in members if (v := score(facts[m], function)) is not None]
    own = score(facts[row], function)
    if len(values) < 2 or own is None or max(values) == min(values):
        return None
    return "best" if own == max(values) else "worst" if own == min(values) else None


def functions(rows: Sequence[int], facts: Sequence[Facts]) -> list[str]:
    """The reward functions scored in these rows, in the order first seen."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(facts[row].rewards))
    return list(names)
