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

# A misspelt reward name is matched again at every check of the file (by two rules each time): the answers for a
# word are kept, bounded in entries and in the word's length, as the loader keeps scalar values.
MEMO_CHARS = 200
MEMO_ENTRIES = 1024


class PreparedCandidates:
    """Candidate strings with their (character, occurrence) masks; build once, match many words."""

    def __init__(self, words: Sequence[str]):
        self.words = tuple(words)
        self.memo: dict[tuple[str, int, float], tuple[str, ...]] = {}
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
        key = (word, n, cutoff)
        known = self.memo.get(key) if len(word) <= MEMO_CHARS else None
        if known is None:
            known = tuple(self._close_matches(word, n, cutoff))
            if len(word) <= MEMO_CHARS:
                if len(self.memo) >= MEMO_ENTRIES:
                    self.memo.clear()
                self.memo[key] = known
        return list(known)  # a new list each time: callers may change theirs

    def _close_matches(self, word: str, n: int, cutoff: float) -> list[str]:
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
    def _ratios(
        matcher: difflib.SequenceMatcher, word: str, group: list, word_mask: int, length: int, cutoff: float
    ) -> list[tuple[float, str]]:
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


# --- did-you-mean for keys: spelling closeness, but never a change of meaning ---------------------------------------

# Names people write for a setting (from other trainers, older TRL docs, common shorthand) -> the field that means
# the same. Checked before spelling, so the same-meaning field wins over a closer-looking one.
SAME_MEANING = {
    "num_eval_generations": "num_generations_eval",
    "eval_num_generations": "num_generations_eval",
    "dataset_split": "dataset_train_split",
    "train_split": "dataset_train_split",
    "split": "dataset_train_split",
    "dataset_train_split_name": "dataset_train_split",
    "test_split": "dataset_test_split",
    "eval_split": "dataset_test_split",
    "dataset_eval_split": "dataset_test_split",
    "dataset_test_split_name": "dataset_test_split",
    "dataset_config_name": "dataset_config",
    "dataset": "dataset_name",
    "dataset_path": "dataset_name",
    "dataset_id": "dataset_name",
    "dataset_id_or_path": "dataset_name",
    "model": "model_name_or_path",
    "model_name": "model_name_or_path",
    "model_path": "model_name_or_path",
    "model_id": "model_name_or_path",
    "lr": "learning_rate",
    "train_batch_size": "per_device_train_batch_size",
    "batch_size": "per_device_train_batch_size",
    "per_device_batch_size": "per_device_train_batch_size",
    "micro_batch_size": "per_device_train_batch_size",
    "eval_batch_size": "per_device_eval_batch_size",
    "grad_accum_steps": "gradient_accumulation_steps",
    "gradient_accumulation": "gradient_accumulation_steps",
    "grad_accum": "gradient_accumulation_steps",
    "epochs": "num_train_epochs",
    "num_epochs": "num_train_epochs",
    "max_new_tokens": "max_completion_length",
    "max_response_length": "max_completion_length",
    "max_gen_length": "max_completion_length",
    "group_size": "num_generations",
    "num_samples": "num_generations",
    "n_samples": "num_generations",
    "num_completions": "num_generations",
    "rollout_n": "num_generations",
    "kl_coef": "beta",
    "kl_beta": "beta",
    "init_kl_coef": "beta",
    "kl_coeff": "beta",
    "clip_range": "epsilon",
    "cliprange": "epsilon",
    "clip_eps": "epsilon",
    "clip_ratio": "epsilon",
    "clip_ratio_low": "epsilon",
    "clip_eps_high": "epsilon_high",
    "clip_ratio_high": "epsilon_high",
    "ppo_epochs": "num_iterations",
    "rewards": "reward_funcs",
    "reward_functions": "reward_funcs",
    "reward_fns": "reward_funcs",
    "reward_model": "reward_model_name_or_path",
    "scheduler": "lr_scheduler_type",
    "lr_scheduler": "lr_scheduler_type",
    "lr_schedule": "lr_scheduler_type",
    "gpu_memory_utilization": "vllm_gpu_memory_utilization",
    "vllm_gpu_memory": "vllm_gpu_memory_utilization",
    "lora_rank": "lora_r",
    "rank": "lora_r",
    "target_modules": "lora_target_modules",
    "lora_target": "lora_target_modules",
    "modules_to_save": "lora_modules_to_save",
    "log_steps": "logging_steps",
    "checkpoint_steps": "save_steps",
    "max_model_len": "vllm_max_model_length",
}

# Word pairs that turn one setting into a different one: a suggestion never trades one side for the other.
OPPOSITES = (
    ({"eval", "evaluation", "test"}, {"train", "training"}),
    ({"min", "minimum"}, {"max", "maximum"}),
    ({"pos", "positive"}, {"neg", "negative"}),
    ({"high", "upper"}, {"low", "lower"}),
    ({"4bit"}, {"8bit"}),
    ({"bf16"}, {"fp16"}),
    ({"prompt"}, {"completion"}),
    ({"server"}, {"colocate"}),
    ({"input"}, {"output"}),
    ({"first"}, {"last"}),
    ({"start"}, {"end"}),
)
# Qualifiers that say which phase a setting applies to: a suggestion neither drops nor adds one
# (eval_temperature -> temperature would turn an evaluation setting into the training one).
QUALIFIERS = frozenset({"eval", "evaluation", "test", "ref"})
# Pairs that spelling alone would offer but mean something else.
DENIED = frozenset(
    {
        ("eval_temperature", "temperature"),
        ("eval_top_p", "top_p"),
        ("eval_top_k", "top_k"),
        ("eval_max_completion_length", "max_completion_length"),
        ("ref_beta", "beta"),
    }
)


def _words(name: str) -> frozenset[str]:
    return frozenset(w for w in name.lower().replace("-", "_").split("_") if w)


def changes_meaning(word: str, candidate: str) -> bool:
    """Whether renaming `word` to `candidate` would change what the setting means, not just its spelling."""
    if (word, candidate) in DENIED:
        return True
    have, get = _words(word), _words(candidate)
    for left, right in OPPOSITES:
        if (have & left and get & right and not get & left) or (have & right and get & left and not get & right):
            return True
    return _qualifiers(have) != _qualifiers(get)


def _qualifiers(words: frozenset[str]) -> frozenset[str]:
    """The qualifiers among `words`, a misspelt one included ('evl' is 'eval')."""
    return frozenset(
        q
        for q in QUALIFIERS
        for w in words
        if w == q or (len(w) >= 3 and difflib.SequenceMatcher(None, w, q).ratio() >= 0.75)
    )


def suggest(
    word: str, candidates: frozenset[str], preferred: frozenset[str] = frozenset(), cutoff: float = 0.75
) -> str | None:
    """The accepted key `word` most likely stands for, or None.

    A curated same-meaning name wins; then a candidate with the same words in another order
    (num_eval_generations -> num_generations_eval); then the closest spelling that does not change the meaning,
    preferring a key from `preferred` (keys nearly every config sets) when it is about as close.
    """
    key = word.lower().replace("-", "_")
    same = SAME_MEANING.get(key)
    if same in candidates:
        return same
    matches = [
        m
        for m in prepared(candidates).close_matches(word, n=6, cutoff=min(cutoff, 0.6))
        if not changes_meaning(word, m)
    ]
    reordered = [m for m in matches if _words(m) == _words(word)]
    if reordered:
        return reordered[0]
    ratios = {m: difflib.SequenceMatcher(None, word, m).ratio() for m in matches}
    matches = [m for m in matches if ratios[m] >= cutoff]
    if not matches:
        return None
    best = ratios[matches[0]]
    close = [m for m in matches if ratios[m] >= best - 0.05]
    return next((m for m in close if m in preferred), matches[0])
