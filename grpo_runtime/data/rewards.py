"""Reward functions: resolving the config's names, calling them, and turning None into NaN.

`reward_funcs` entries are either a registry name (REGISTRY, the names `trl grpo` accepts) or a dotted import path
`package.module.function`, imported with the current directory on `sys.path` like TRL. `reward_model_name_or_path`
adds a sequence-classification model (one label) as the first reward. Functions run on each process's own rows;
the caller gathers the [rows, functions] matrix across processes before computing advantages.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import torch

import grpo_runtime.data.reward_library as reward_library
from grpo_runtime.common import CannotRun

REGISTRY: dict[str, Callable[[], Callable]] = {
    "accuracy_reward": lambda: reward_library.accuracy_reward,
    "reasoning_accuracy_reward": lambda: reward_library.reasoning_accuracy_reward,
    "think_format_reward": lambda: reward_library.think_format_reward,
    # the values TRL's script uses for this name
    "get_soft_overlong_punishment": lambda: reward_library.get_soft_overlong_punishment(1280, 256),
    "target_word_reward": lambda: reward_library.target_word_reward,
}


def import_dotted(path: str) -> Callable:
    """`pkg.module.func` -> the function, importing relative to the current directory first."""
    module_name, _, attribute = path.rpartition(".")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise CannotRun(f"could not load reward function {path!r}: {error}") from error


def resolve_reward_func(name: str, allow_import: bool = True) -> Callable:
    if name in REGISTRY:
        return REGISTRY[name]()
    if "." in name and allow_import:
        return import_dotted(name)
    raise CannotRun(
        f"unknown reward function {name!r}; expected one of {sorted(REGISTRY)}"
        + (" or a dotted import path such as my_pkg.rewards.my_reward" if allow_import else "")
    )


def reward_name(func) -> str:
    """The name used in `rewards/{name}/mean`: a function's name, a partial's function, or a class name."""
    if isinstance(func, RewardModel):
        return func.__name__
    if isinstance(func, functools.partial):
        return reward_name(func.func)
    return getattr(func, "__name__", None) or type(func).__name__


class RewardModel:
    """A sequence-classification model scoring `prompt + completion`; its reward is the first logit."""

    def __init__(self, name_or_path: str, device, chat_template_kwargs: dict | None = None, **load_kwargs):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.model = AutoModelForSequenceClassification.from_pretrained(name_or_path, num_labels=1, **load_kwargs)
        self.model.to(device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.chat_template_kwargs = chat_template_kwargs or {}
        self.__name__ = name_or_path.rstrip("/").split("/")[-1]

    def texts(self, prompts, completions) -> list[str]:
        if isinstance(prompts[0], str):
            return [p + c for p, c in zip(prompts, completions)]
        return [
            self.tokenizer.apply_chat_template(p + c, tokenize=False, **self.chat_template_kwargs)
            for p, c in zip(prompts, completions)
        ]

    def __call__(self, prompts, completions, **kwargs) -> list[float]:
        batch = self.tokenizer(
            text=self.texts(prompts, completions),
            return_tensors="pt",
            padding=True,
            padding_side="right",
            add_special_tokens=False,
        ).to(self.model.device)
        with torch.inference_mode():
            return self.model(**batch).logits[:, 0].float().tolist()


@dataclass
class RunState:
    """What reward functions see as `trainer_state` (the HF TrainerState fields they commonly read)."""

    global_step: int = 0
    max_steps: int = 0
    epoch: float = 0.0
    num_input_tokens_seen: int = 0


def _check_length(name: str, values: list, expected: int, audit: dict | None = None) -> list[float]:
    if len(values) != expected:
        raise ValueError(
            f"the reward function {name!r} returned {len(values)} rewards but {expected} were expected "
            f"(one per completion)"
        )
    scores = [float("nan") if v is None else float(v) for v in values]
    if audit is not None:  # run health tells a None (does not apply) from a NaN (a bug)
        none = sum(v is None for v in values)
        audit.setdefault(name, {}).update(none=none, nan=sum(math.isnan(v) for v in scores) - none)
    return scores


def score(
    funcs, prompts, completions, completion_lists, columns: dict, state: RunState, log_metric, audit: dict | None = None
) -> torch.Tensor:
    """Call every reward function on this process's rows.  Returns [rows, functions] float32, NaN for None.

    `columns` holds the extra dataset columns (one list per column); they arrive as keyword arguments, together
    with `trainer_state`, `log_extra` (accepted and ignored) and `log_metric(name, value)`. Async reward functions
    run concurrently. `audit`, when given, receives per function name its None and NaN counts and the seconds its
    call took (async ones: the time of the whole concurrent batch)."""
    kwargs = dict(columns, trainer_state=state, log_extra=lambda column, values: None, log_metric=log_metric)
    call = dict(prompts=prompts, completions=completions, completion_ids=completion_lists, **kwargs)
    rewards = torch.full((len(prompts), len(funcs)), float("nan"))
    pending = {}
    for k, func in enumerate(funcs):
        if inspect.iscoroutinefunction(func) or (callable(func) and inspect.iscoroutinefunction(func.__call__)):
            pending[k] = func(**call)
        else:
            started = time.perf_counter()
            values = func(**call)
            _timed(audit, reward_name(func), time.perf_counter() - started)
            rewards[:, k] = torch.tensor(_check_length(reward_name(func), values, len(prompts), audit))
    if pending:
        started = time.perf_counter()
        results = asyncio.run(_gather(list(pending.values())))
        for k, values in zip(pending, results):
            _timed(audit, reward_name(funcs[k]), time.perf_counter() - started)
            rewards[:, k] = torch.tensor(_check_length(reward_name(funcs[k]), values, len(prompts), audit))
    return rewards


def _timed(audit: dict | None, name: str, seconds: float) -> None:
    if audit is not None:
        audit.setdefault(name, {})["seconds"] = seconds


async def _gather(coroutines):
    return await asyncio.gather(*coroutines)
