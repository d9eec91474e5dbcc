"""`--profile open-r1`: what huggingface/open-r1's `grpo.py` does with its script arguments, so its recipes run as
written (the arguments are typed by grpo_schema.engine.profiles.open_r1_args).

* `chat_template` replaces the tokenizer's chat template;
* the data is `dataset_name` (+ `dataset_config`), or `dataset_mixture`: each entry loaded with its `config` and
  `split`, cut to its `columns`, shuffled with the mixture's `seed` and cut to `weight` of its rows, then all
  concatenated and shuffled with that seed; `test_split_size` holds out a seeded test split;
* every row becomes a conversation: the `system_prompt` (when set) and the user message taken from
  `dataset_prompt_column`; a column that already holds a conversation is kept as it is, after the system prompt
  (unless it starts with a system message of its own); a `messages` column is dropped;
* `reward_funcs` are names from open-r1's registry (default: accuracy, format, tag_count) built with the script's
  parameters (cosine_*, repetition_*, max_completion_len, soft_punish_cache, code_language, code_eval_*,
  parallel_code_exec_per_proc). The rewards that run completions' code (code, binary_code, cf_code, ioi_code) run
  on this machine's local executor (grpo_runtime.data.code_execution) when the recipe asks for it
  (`code_provider: local`, for code and binary_code); one that asks for a remote sandbox (E2B, MorphCloud, Piston)
  is refused before the run starts: there is no client for those here, as are the rewards of open-r1's experiment
  branches. `grpo smoke` gives both a stand-in (the local executor for the remote sandbox,
  grpo_runtime.data.branch_rewards for a branch's reward) and says so (`stand_ins`).
"""

from __future__ import annotations

import functools
import math
import re

import grpo_runtime.data.reward_library as reward_library
from grpo_runtime.data.cf_scoring import CodeforcesReward
from grpo_runtime.data.code_rewards import BinaryCodeReward, CodeReward
from grpo_runtime.data.ioi_scoring import IOIReward
from grpo_runtime.data.reward_library import answers_match, completion_text
from grpo_runtime.model.modality import refuse_images

DEFAULT_REWARDS = ("accuracy", "format", "tag_count")
SANDBOX_REWARDS = ("code", "binary_code", "ioi_code", "cf_code")  # run completions' code
BRANCH_REWARDS = ("soft_format", "think_format", "think_accuracy", "think_code_format", "weighted_binary_code_reward")


# True in `grpo smoke`'s worker processes only: the local executor stands in for every remote code sandbox and
# grpo_runtime.data.branch_rewards for an experiment branch's reward (the smoke states both in its report), as the
# parent's own checks pass stand_ins=True.
SMOKE_STAND_INS = False


def reward_names(config) -> list[str]:
    return list(config.reward_funcs) if config.reward_funcs else list(DEFAULT_REWARDS)


# Where open-r1 runs each sandboxed reward's code: a hosted service, and what its client needs.
SANDBOXES = {
    "e2b": "E2B's hosted sandboxes (the e2b-code-interpreter package and an E2B API key)",
    "morph": "MorphCloud's hosted sandboxes (the morphcloud package and MORPH_API_KEY)",
    "piston": "Piston workers (a Piston server per PISTON_ENDPOINTS)",
}


def sandbox_of(name: str, args) -> str:
    """The service open-r1 sends reward `name`'s code to, as its script arguments choose it."""
    if name == "cf_code":
        return "piston"
    if name == "ioi_code":
        return getattr(args, "ioi_provider", None) or "piston"
    return getattr(args, "code_provider", None) or "e2b"


def sandbox_description(name: str, args) -> str:
    """The remote sandbox reward `name` asks for, in words (with the router a recipe names, when it names one)."""
    service = sandbox_of(name, args)
    router = getattr(args, f"{service}_router_url", None) if service in ("e2b", "morph") else None
    where = SANDBOXES.get(service, service)
    return f"{where}, through the router at {router}" if router else where


def runs_locally(name: str, args) -> bool:
    """The recipe asks for this machine's executor (open-r1 lists `local` among code_provider's choices, though its
    own get_provider has no provider of that name)."""
    return name in ("code", "binary_code") and sandbox_of(name, args) == "local"


def refusals(config, args, stand_ins: bool = False) -> list[str]:
    """Why each reward cannot run here. `stand_ins` (grpo smoke): the local executor stands in for a remote
    sandbox and a stand-in for a branch's reward, so neither is refused."""
    found, stand_ins = [], stand_ins or SMOKE_STAND_INS
    for name in reward_names(config):
        if name in SANDBOX_REWARDS and not (stand_ins or runs_locally(name, args)):
            where = sandbox_description(name, args)
            found.append(
                f"open-r1's {name!r} reward runs each completion's code remotely in {where}, a remote "
                "code sandbox grpo_runtime has no client for; run this recipe with open-r1"
                + (
                    ", or set code_provider: local to run the code on this machine's local executor"
                    if name in ("code", "binary_code")
                    else ""
                )
            )
        elif name in BRANCH_REWARDS and not stand_ins:
            found.append(
                f"{name!r} exists only on open-r1's experiment branches; grpo_runtime "
                "builds the rewards of its main branch"
            )
    return found


def substituted_sandboxes(config, args) -> dict[str, str]:
    """{reward name: the remote sandbox it asks for} for the sandboxed rewards `grpo smoke` runs locally instead."""
    return {
        name: sandbox_description(name, args)
        for name in reward_names(config)
        if name in SANDBOX_REWARDS and not runs_locally(name, args)
    }


# --- data ------------------------------------------------------------------------------------------------------


def load_splits(config, args) -> dict:
    """{"train": ..., "test": ...} as open-r1's get_dataset returns them (before the conversation mapping)."""
    import datasets

    from grpo_runtime.data.datasets import load_local_or_hub

    mixture = args.dataset_mixture
    if mixture is None:
        splits = {"train": config.dataset_train_split, "test": config.dataset_test_split}
        return _LazySplits(lambda split: load_local_or_hub(config.dataset_name, config.dataset_config, split), splits)
    parts = []
    for entry in mixture.datasets:
        part = load_local_or_hub(entry.id, entry.config, entry.split)
        if entry.columns is not None:
            part = part.select_columns(list(entry.columns))
        if entry.weight is not None:
            part = part.shuffle(seed=mixture.seed).select(range(int(len(part) * entry.weight)))
        parts.append(part)
    combined = datasets.concatenate_datasets(parts).shuffle(seed=mixture.seed)
    if mixture.test_split_size is None:
        return {"train": combined}
    return dict(combined.train_test_split(test_size=mixture.test_split_size, seed=mixture.seed))


class _LazySplits(dict):
    """dataset_name's splits, loaded only when asked for (a run without evaluation never reads the test split)."""

    def __init__(self, load, names):
        super().__init__()
        self.load, self.names = load, names

    def __missing__(self, key):
        self[key] = self.load(self.names[key])
        return self[key]

    def __contains__(self, key):
        return key in self.names


def load_prompts(config, args, split: str = "train"):
    splits = load_splits(config, args)
    if split not in splits:
        raise ValueError("evaluation needs a test split: set dataset_mixture.test_split_size")
    dataset = splits[split]
    column = args.dataset_prompt_column
    if column not in dataset.column_names:
        raise ValueError(
            f"dataset_prompt_column {column!r} is not a column of the {split} data (columns: {dataset.column_names})"
        )
    refuse_images(dataset, split)

    def conversation(row):
        messages = [{"role": "system", "content": args.system_prompt}] if args.system_prompt is not None else []
        value = row[column]
        if is_conversation(value):  # already a conversation: the system prompt goes first (unless it has one)
            has_system = bool(value) and value[0].get("role") == "system"
            return {"prompt": (messages if not has_system else []) + [dict(m) for m in value]}
        return {"prompt": messages + [{"role": "user", "content": value}]}

    dataset = dataset.map(conversation)
    if "messages" in dataset.column_names:
        dataset = dataset.remove_columns("messages")
    if config.remove_unused_columns:
        dataset = dataset.select_columns(["prompt"])
    return dataset


def is_conversation(value) -> bool:
    """A prompt column that already holds chat messages (a list of {"role", "content"}), as TRL's conversational
    datasets do. open-r1 nests such a list as one user message's content, which Arrow cannot store beside a
    system prompt's text; it is kept as the conversation instead."""
    return isinstance(value, list) and all(isinstance(m, dict) and "role" in m and "content" in m for m in value)


def apply_tokenizer_settings(tokenizer, args) -> None:
    if args.chat_template is not None:
        tokenizer.chat_template = args.chat_template


# --- rewards: open-r1's registry, written for grpo_runtime ------------------------------------------------------


def texts(completions) -> list[str]:
    return [completion_text(c) for c in completions]


def accuracy_reward(completions, solution, **kwargs) -> list[float | None]:
    """1.0 when the answer matches the gold solution, None when the gold solution cannot be parsed."""
    return [answers_match(gold, text) for text, gold in zip(texts(completions), solution, strict=True)]


FORMAT = re.compile(r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$", re.DOTALL | re.MULTILINE)


def format_reward(completions, **kwargs) -> list[float]:
    """1.0 for `<think>\\n...\\n</think>\\n<answer>\\n...\\n</answer>` exactly."""
    return [1.0 if FORMAT.match(text) else 0.0 for text in texts(completions)]


def tag_count_reward(completions, **kwargs) -> list[float]:
    """0.25 for each of the four tags (with their newlines) present exactly once."""
    tags = ("<think>\n", "\n</think>\n", "\n<answer>\n", "\n</answer>")
    return [sum(0.25 for tag in tags if text.count(tag) == 1) for text in texts(completions)]


STEPS = re.compile(r"(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)")


def reasoning_steps_reward(completions, **kwargs) -> list[float]:
    """Step markers (Step 1:, numbered lines, bullets, First/Second/Next/Finally): 3 or more earn 1.0."""
    return [min(1.0, len(STEPS.findall(text)) / 3) for text in texts(completions)]


def len_reward(completions, solution, **kwargs) -> list[float]:
    """Kimi 1.5's length reward: 0.5 for the shortest of the group down to -0.5 for the longest; wrong answers
    keep only the penalty. An unparseable gold solution counts as correct."""
    contents = texts(completions)
    correct = [answers_match(gold, text) != 0.0 for text, gold in zip(contents, solution, strict=True)]
    lengths = [len(text) for text in contents]
    shortest, longest = min(lengths), max(lengths)
    if shortest == longest:
        return [0.0] * len(contents)
    rewards = []
    for length, right in zip(lengths, correct):
        value = 0.5 - (length - shortest) / (longest - shortest)
        rewards.append(value if right else min(0.0, value))
    return rewards


class CosineScaledReward:
    """Length-scaled correctness: correct answers earn more when short, wrong ones lose less when long."""

    __name__ = "cosine_scaled_reward"

    def __init__(self, args):
        self.wrong = (args.cosine_min_value_wrong, args.cosine_max_value_wrong)
        self.correct = (args.cosine_min_value_correct, args.cosine_max_value_correct)
        self.max_len = args.cosine_max_len

    def __call__(self, completions, solution, **kwargs) -> list[float]:
        rewards = []
        for text, gold in zip(texts(completions), solution, strict=True):
            match = answers_match(gold, text)
            if match is None:
                rewards.append(1.0)  # open-r1 skips an unparseable gold solution with a full reward
                continue
            low, high = self.correct if match else (self.wrong[1], self.wrong[0])
            cosine = math.cos(len(text) / self.max_len * math.pi)
            rewards.append(low + 0.5 * (high - low) * (1.0 + cosine))
        return rewards


class RepetitionPenaltyReward:
    """-max_penalty times the share of repeated word n-grams."""

    __name__ = "repetition_penalty_reward"

    def __init__(self, args):
        self.n, self.max_penalty = args.repetition_n_grams, args.repetition_max_penalty

    def __call__(self, completions, **kwargs) -> list[float]:
        rewards = []
        for text in texts(completions):
            words = text.lower().split()
            if not text or len(words) < self.n:
                rewards.append(0.0)
                continue
            grams = list(zip(*(words[i:] for i in range(self.n))))
            rewards.append((1 - len(set(grams)) / len(grams)) * self.max_penalty)
        return rewards


class CodeFormatReward:
    """format_reward with a fenced block of `code_language` inside the answer; a `language` column (open-r1/
    codeforces has one) names each row's language instead."""

    __name__ = "code_format_reward"

    def __init__(self, args):
        self.language = args.code_language

    def __call__(self, completions, **kwargs) -> list[float]:
        languages = kwargs["language"] if "language" in kwargs else [self.language] * len(completions)
        return [
            1.0 if code_format(language).match(text) else 0.0
            for text, language in zip(texts(completions), languages, strict=True)
        ]


@functools.lru_cache(maxsize=16)
def code_format(language) -> re.Pattern:
    return re.compile(
        rf"^<think>\n.*?\n</think>\n<answer>\n.*?```{re.escape(str(language))}.*?```.*?\n</answer>$",
        re.DOTALL | re.MULTILINE,
    )


REGISTRY = {
    "accuracy": lambda args: accuracy_reward,
    "format": lambda args: format_reward,
    "tag_count": lambda args: tag_count_reward,
    "reasoning_steps": lambda args: reasoning_steps_reward,
    "length": lambda args: len_reward,
    "cosine": CosineScaledReward,
    "repetition_penalty": RepetitionPenaltyReward,
    "code_format": CodeFormatReward,
    "code": CodeReward,
    "binary_code": BinaryCodeReward,
    "cf_code": CodeforcesReward,
    "ioi_code": IOIReward,
    "soft_overlong_punishment": lambda args: reward_library.get_soft_overlong_punishment(
        args.max_completion_len, args.soft_punish_cache
    ),
}


def reward_funcs(config, args, stand_ins: bool = False) -> list:
    refused = refusals(config, args, stand_ins)
    if refused:  # open-r1 has these names: say why they do not run here, never that they do not exist
        raise ValueError(f"reward_funcs: {refused[0]}")
    registry = dict(REGISTRY)
    if stand_ins or SMOKE_STAND_INS:
        from grpo_runtime.data.branch_rewards import stand_ins as branch_stand_ins

        registry.update(branch_stand_ins(REGISTRY))
    funcs = []
    for name in reward_names(config):
        if name not in registry:
            raise ValueError(f"reward_funcs: {name!r} is not in open-r1's registry ({', '.join(REGISTRY)})")
        funcs.append(registry[name](args))
    return funcs
