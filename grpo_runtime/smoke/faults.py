"""How `grpo smoke` names what failed: reward functions checked on every call (the first completion that raises,
the dataset column a reward misses, a result of the wrong length), and a failure's chain classified into one
component (chat template, PEFT target, checkpoint resume, dataset, model, training step) with its frames, the user's
own first. The worker (grpo_runtime.smoke.worker) raises and reports these; nothing here runs a step."""

from __future__ import annotations

import functools
import inspect
import os
import re
import sysconfig
import traceback
from pathlib import Path

OUR_PACKAGES = [
    str(Path(__file__).resolve().parents[1]),
    str(Path(__file__).resolve().parents[2] / "grpo_schema"),
    str(Path(__file__).resolve().parents[2] / "web"),
    str(Path(__file__).resolve().parents[2] / "grpo_web"),
]
LIBRARY_DIRS = {
    os.path.realpath(sysconfig.get_paths()[name]) for name in ("stdlib", "platstdlib", "purelib", "platlib")
}
MISSING_ARGUMENT = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: (.+)")


class SmokeFault(Exception):
    """A failure already attributed to a component (a reward function, a dataset column, ...)."""

    def __init__(self, component: str, message: str, key: str | None = None, needle: str | None = None):
        super().__init__(message)
        self.component, self.key, self.needle = component, key, needle


# --- reward functions, checked on every call ------------------------------------------------------------------------


def checked_reward(func, name: str, columns_key: str):
    """`func` behind a check: an exception is retried completion by completion to name the first one that raises,
    a missing argument names the dataset column, and a result that is not one reward per completion is named."""

    @functools.wraps(func if inspect.isfunction(func) else type(func).__call__)
    def call(*args, **kwargs):
        completions = kwargs.get("completions") or []
        try:
            values = func(*args, **kwargs)
        except TypeError as error:
            missing = MISSING_ARGUMENT.search(str(error))
            if missing and func_frame_is_call(error):
                column = missing.group(1).split(",")[0].strip(" '\"")
                raise SmokeFault(
                    "dataset column",
                    f"the reward function {name} reads the column {column!r}, which "
                    f"the dataset does not have (columns: {sorted(dataset_keys(kwargs))})",
                    columns_key,
                ) from error
            raise reward_fault(func, name, kwargs, completions, error) from error
        except KeyError as error:
            if error.args and isinstance(error.args[0], str) and error.args[0] not in kwargs:
                raise SmokeFault(
                    "dataset column",
                    f"the reward function {name} reads the column {error.args[0]!r}, "
                    f"which the dataset does not have (columns: {sorted(dataset_keys(kwargs))})",
                    columns_key,
                ) from error
            raise reward_fault(func, name, kwargs, completions, error) from error
        except SmokeFault:
            raise
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as error:  # attributed to the reward below (math_verify's
            # TimeoutException, for one, is a BaseException)
            raise reward_fault(func, name, kwargs, completions, error) from error
        if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise SmokeFault(
                f"reward function {name}",
                f"the reward function {name} returned {values!r} instead of "
                f"a list of {len(completions)} rewards (one per completion, None for 'no opinion')",
                "reward_funcs",
                name,
            )
        return values

    call.__name__ = name
    return call


def func_frame_is_call(error: TypeError) -> bool:
    """The TypeError came from calling the reward itself (its signature), not from inside it."""
    frames = traceback.extract_tb(error.__traceback__)
    return len(frames) <= 1


def dataset_keys(kwargs: dict) -> set:
    return {
        k
        for k in kwargs
        if k not in ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric")
    }


def reward_fault(func, name: str, kwargs: dict, completions: list, error: Exception) -> SmokeFault:
    """Call the reward on one completion at a time to name the first that raises."""
    count = len(completions)
    for k in range(count):
        one = {
            key: ([value[k]] if isinstance(value, list) and len(value) == count else value)
            for key, value in kwargs.items()
        }
        try:
            func(**one)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # this completion is the one
            text = completion_text(completions[k])
            return SmokeFault(
                f"reward function {name}",
                f"the reward function {name} raised {type(error).__name__}: {error} on completion {k} ({text[:120]!r})",
                "reward_funcs",
                name,
            )
    return SmokeFault(
        f"reward function {name}",
        f"the reward function {name} raised {type(error).__name__}: "
        f"{error} on the batch of {count} completions (on none of them alone)",
        "reward_funcs",
        name,
    )


def completion_text(completion) -> str:
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def wrap_rewards(funcs: list, columns_key: str) -> list:
    from grpo_runtime.data.rewards import RewardModel, reward_name

    wrapped = []
    for func in funcs:
        if (
            isinstance(func, RewardModel)
            or inspect.iscoroutinefunction(func)
            or (callable(func) and inspect.iscoroutinefunction(func.__call__))
        ):
            wrapped.append(func)
        else:
            wrapped.append(checked_reward(func, reward_name(func), columns_key))
    return wrapped


# --- classifying a failure ------------------------------------------------------------------------------------------


def frame_owner(filename: str) -> str:
    """Whose code a frame runs: "user" (the user's own files), "ours" (grpo_runtime, grpo_schema) or "library"
    (the standard library, installed packages, and compiled code whose frames name no file on this machine, such
    as pyarrow's `array.pxi`)."""
    if filename.startswith("<") or not os.path.isabs(filename) or not os.path.isfile(filename):
        return "library"
    path = os.path.realpath(filename)
    if any(path.startswith(d + os.sep) for d in OUR_PACKAGES):
        return "ours"
    parts = Path(path).parts
    if (
        "site-packages" in parts
        or "dist-packages" in parts
        or any(path.startswith(d + os.sep) for d in LIBRARY_DIRS if d)
    ):
        return "library"
    return "user"


def is_user_frame(filename: str) -> bool:
    return frame_owner(filename) == "user"


OWNER_ORDER = {"user": 0, "ours": 1, "library": 2}


def frames(error: BaseException) -> list[dict]:
    """The traceback's frames of the whole chain (causes first), ordered: the user's own code first, then
    grpo_runtime's and grpo_schema's, then the libraries' (each group in call order)."""
    chain, seen = [], set()
    current = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    found = []
    for link in reversed(chain):
        for frame in traceback.extract_tb(link.__traceback__):
            owner = frame_owner(frame.filename)
            found.append(
                {
                    "file": frame.filename,
                    "line": frame.lineno,
                    "function": frame.name,
                    "code": frame.line or "",
                    "owner": owner,
                    "user": owner == "user",
                }
            )
    return sorted(found, key=lambda f: OWNER_ORDER[f["owner"]])


def exception_of(error: BaseException) -> dict:
    """The exception that failed the run, as the report carries it: its type and message. A failure already
    attributed (SmokeFault) reports the exception it was raised from."""
    fault = error
    while isinstance(fault, SmokeFault) and (fault.__cause__ or fault.__context__) is not None:
        fault = fault.__cause__ or fault.__context__
    kind = type(fault)
    name = kind.__name__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__qualname__}"
    return {"type": name, "message": str(fault)}


def chain_of(error: BaseException) -> list[BaseException]:
    out, current = [], error
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def classify(error: BaseException, phase: str, config) -> dict:
    """{"component", "error", "key", "needle"} for a failure."""
    chain = chain_of(error)
    fault = next((e for e in chain if isinstance(e, SmokeFault)), None)
    if fault is not None:
        return dict(component=fault.component, error=str(fault), key=fault.key, needle=fault.needle)
    names = [f["file"] for e in chain for f in [{"file": fr.filename} for fr in traceback.extract_tb(e.__traceback__)]]
    functions = [fr.name for e in chain for fr in traceback.extract_tb(e.__traceback__)]
    text = f"{type(error).__name__}: {error}"
    template = any(type(e).__module__.startswith("jinja2") for e in chain) or "apply_chat_template" in functions
    if template:
        return dict(
            component="chat template",
            error=f"the chat template failed on the dataset's messages: {text}",
            key="chat_template",
        )
    if any("Target module" in str(e) or "target_modules" in str(e) for e in chain) or (
        any("/peft/" in n for n in names) and "wrap_lora" in functions
    ):
        return dict(
            component="PEFT target", error=f"a LoRA target is not in the model: {text}", key="lora_target_modules"
        )
    if phase == "resume" and (
        any(type(e).__name__ == "CheckpointError" for e in chain)
        or any(n.endswith("outputs/checkpoint.py") for n in names)
        or "_load_from_checkpoint" in functions
        or "_load_optimizer_and_scheduler" in functions
    ):
        key = "save_only_model" if getattr(config, "save_only_model", False) else "save_steps"
        return dict(
            component="checkpoint resume", error=f"the checkpoint saved after step 1 cannot be resumed: {text}", key=key
        )
    dataset_words = ("column", "training set", "prompts", "dataset", "split")
    if any(n.endswith("data/datasets.py") or n.endswith("data/open_r1.py") for n in names) or (
        type(error).__name__ == "CannotRun" and any(word in str(error) for word in dataset_words)
    ):
        key = "datasets" if getattr(config, "datasets", None) else "dataset_name"
        return dict(component="dataset", error=text, key=key)
    if any(n.endswith("model/loading.py") for n in names):
        return dict(component="model", error=text, key="model_name_or_path")
    return dict(component="training step", error=text, key=None)
