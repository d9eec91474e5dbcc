"""difflib.get_close_matches with the same answers, for long candidate lists: cheap exact pre-filters first.

get_close_matches tries every candidate with three ratios in turn; over the ~250 keys a config accepts that is
~0.6 ms per unknown key, most of it in quick_ratio's Python loop over characters, then in ratio for the candidates
that pass. Here the candidates are grouped by length (a length whose real_quick_ratio is below the cutoff is
skipped whole), and each is stored as a bit mask with one bit per (character, occurrence): quick_ratio's multiset
intersection is then the popcount of an AND, computed in C. A candidate that passes gets a second bound, the
longest common subsequence (bit-parallel), which ratio can never exceed; only then difflib's own ratio. Every
candidate dropped is one difflib drops, and the best n are taken as difflib takes them, so the result is the
same, order and ties included (tests/benchmarks/test_fast_paths.py compares them). ~0.1 ms per key.
"""

from __future__ import annotations

import difflib
import functools
import heapq
from typing import Sequence


class PreparedCandidates:
    """Candidate strings with their (character, occurrence) masks; build once, match many words."""

    def __init__(self, words: Sequence[str]):
        self.words = tuple(words)
        self.bits: dict[tuple[str, int], int] = {}
        # length -> [(candidate, mask)]: a whole length is skipped when even a full match could not reach the cutoff
        self.by_length: dict[int, list[tuple[str, int, dict[str, int]]]] = {}
        for word in self.words:
            self.by_length.setdefault(len(word), []).append((word, self._mask(word, grow=True), _positions(word)))

    def _mask(self, word: str, grow: bool) -> int:
        seen: dict[str, int] = {}
        mask = 0
        for char in word:
            occurrence = seen.get(char, 0)
            seen[char] = occurrence + 1
            bit = self.bits.get((char, occurrence))
            if bit is None:
                if not grow:  # no candidate holds this character this often: it cannot add to an intersection
                    continue
                bit = self.bits[(char, occurrence)] = len(self.bits)
            mask |= 1 << bit
        return mask

    def close_matches(self, word: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """difflib.get_close_matches(word, self.words, n, cutoff)."""
        if n <= 0:
            raise ValueError(f"n must be > 0: {n!r}")
        if not 0.0 <= cutoff <= 1.0:
            raise ValueError(f"cutoff must be in [0.0, 1.0]: {cutoff!r}")
        word_mask, size = self._mask(word, grow=False), len(word)
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        result = []
        for length, group in self.by_length.items():
            if _quick_ratio(min(length, size), length + size) < cutoff:  # real_quick_ratio: an upper bound
                continue
            result += self._ratios(matcher, word, group, word_mask, size + length, cutoff)
        return [candidate for _, candidate in heapq.nlargest(n, result)]

    @staticmethod
    def _ratios(matcher: difflib.SequenceMatcher, word: str, group: list, word_mask: int, length: int,
                cutoff: float) -> list[tuple[float, str]]:
        """(ratio, candidate) of the candidates of one length that reach the cutoff, as get_close_matches keeps."""
        found = []
        for candidate, mask, positions in group:
            if _quick_ratio((mask & word_mask).bit_count(), length) < cutoff:
                continue
            # quick_ratio is the value just computed, and real_quick_ratio (2 x the shorter length / total) is never
            # below it: both of difflib's first two tests pass. ratio counts the characters of matching blocks,
            # which run in order in both strings: never more than the longest common subsequence, a bound that
            # costs a tenth of ratio itself.
            if _quick_ratio(_lcs_length(positions, len(candidate), word), length) < cutoff:
                continue
            matcher.set_seq1(candidate)
            ratio = matcher.ratio()
            if ratio >= cutoff:
                found.append((ratio, candidate))
        return found


def _positions(word: str) -> dict[str, int]:
    """character -> bit mask of where it occurs in word."""
    masks: dict[str, int] = {}
    for index, char in enumerate(word):
        masks[char] = masks.get(char, 0) | 1 << index
    return masks


def _lcs_length(positions: dict[str, int], size: int, other: str) -> int:
    """Length of the longest common subsequence of a word (its `positions`, `size` characters) and `other`: the
    bit-parallel algorithm of Allison and Dix (1986), one pass over `other` with a few integer operations a step."""
    full = (1 << size) - 1
    row = full
    for char in other:
        matched = row & positions.get(char, 0)
        row = ((row + matched) | (row - matched)) & full
    return size - row.bit_count()


def _quick_ratio(matches: int, length: int) -> float:
    return 2.0 * matches / length if length else 1.0  # difflib's _calculate_ratio, to the last bit


@functools.lru_cache(maxsize=16)
def prepared(words: frozenset[str]) -> PreparedCandidates:
    """The candidates of a set, in sorted order (as the callers passed them to difflib)."""
    return PreparedCandidates(sorted(words))
