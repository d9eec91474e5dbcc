"""One process of `grpo smoke`: `python -m grpo_runtime.launch.smoke_worker SPEC.json` (under `accelerate launch`
for several processes). It runs the smoke's config through the ordinary run path (check, then train.main) for one
optimizer step with a checkpoint, then resumes that checkpoint for the remaining steps; `--engine trl` does the same
through TRL's GRPOTrainer. A failure is classified (which component, which completion, the user's own frames first)
and written to RESULT-RANK.json for the parent (grpo_runtime.launch.smoke).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import re
import sys
import sysconfig
import traceback
from pathlib import Path

OUR_PACKAGES = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "grpo_schema"),
                str(Path(__file__).resolve().parents[2] / "web"), str(Path(__file__).resolve().parents[2] / "grpo_web")]
LIBRARY_DIRS = {os.path.realpath(sysconfig.get_paths()[name])
                for name in ("stdlib", "platstdlib", "purelib", "platlib")}
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
                raise SmokeFault("dataset column", f"the reward function {name} reads the column {column!r}, which "
                                 f"the dataset does not have (columns: {sorted(dataset_keys(kwargs))})",
                                 columns_key) from error
            raise reward_fault(func, name, kwargs, completions, error) from error
        except KeyError as error:
            if error.args and isinstance(error.args[0], str) and error.args[0] not in kwargs:
                raise SmokeFault("dataset column", f"the reward function {name} reads the column {error.args[0]!r}, "
                                 f"which the dataset does not have (columns: {sorted(dataset_keys(kwargs))})",
                                 columns_key) from error
            raise reward_fault(func, name, kwargs, completions, error) from error
        except SmokeFault:
            raise
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as error:  # attributed to the reward below (math_verify's
            # TimeoutException, for one, is a BaseException)
            raise reward_fault(func, name, kwargs, completions, error) from error
        if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise SmokeFault(f"reward function {name}", f"the reward function {name} returned {values!r} instead of "
                             f"a list of {len(completions)} rewards (one per completion, None for 'no opinion')",
                             "reward_funcs", name)
        return values

    call.__name__ = name
    return call


def func_frame_is_call(error: TypeError) -> bool:
    """The TypeError came from calling the reward itself (its signature), not from inside it."""
    frames = traceback.extract_tb(error.__traceback__)
    return len(frames) <= 1


def dataset_keys(kwargs: dict) -> set:
    return {k for k in kwargs if k not in ("prompts", "completions", "completion_ids", "trainer_state", "log_extra",
                                           "log_metric")}


def reward_fault(func, name: str, kwargs: dict, completions: list, error: Exception) -> SmokeFault:
    """Call the reward on one completion at a time to name the first that raises."""
    count = len(completions)
    for k in range(count):
        one = {key: ([value[k]] if isinstance(value, list) and len(value) == count else value)
               for key, value in kwargs.items()}
        try:
            func(**one)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # this completion is the one
            text = completion_text(completions[k])
            return SmokeFault(f"reward function {name}", f"the reward function {name} raised "
                              f"{type(error).__name__}: {error} on completion {k} ({text[:120]!r})",
                              "reward_funcs", name)
    return SmokeFault(f"reward function {name}", f"the reward function {name} raised {type(error).__name__}: "
                      f"{error} on the batch of {count} completions (on none of them alone)", "reward_funcs", name)


def completion_text(completion) -> str:
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def wrap_rewards(funcs: list, columns_key: str) -> list:
    from grpo_runtime.data.rewards import RewardModel, reward_name

    wrapped = []
    for func in funcs:
        if isinstance(func, RewardModel) or inspect.iscoroutinefunction(func) or \
                (callable(func) and inspect.iscoroutinefunction(func.__call__)):
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
    if "site-packages" in parts or "dist-packages" in parts or \
            any(path.startswith(d + os.sep) for d in LIBRARY_DIRS if d):
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
            found.append({"file": frame.filename, "line": frame.lineno, "function": frame.name,
                          "code": frame.line or "", "owner": owner, "user": owner == "user"})
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
        return dict(component="chat template", error=f"the chat template failed on the dataset's messages: {text}",
                    key="chat_template")
    if any("Target module" in str(e) or "target_modules" in str(e) for e in chain) or \
            (any("/peft/" in n for n in names) and "wrap_lora" in functions):
        return dict(component="PEFT target", error=f"a LoRA target is not in the model: {text}",
                    key="lora_target_modules")
    if phase == "resume" and (any(type(e).__name__ == "CheckpointError" for e in chain)
                              or any(n.endswith("outputs/checkpoint.py") for n in names)
                              or "_load_from_checkpoint" in functions or "_load_optimizer_and_scheduler" in functions):
        key = "save_only_model" if getattr(config, "save_only_model", False) else "save_steps"
        return dict(component="checkpoint resume", error=f"the checkpoint saved after step 1 cannot be resumed: {text}",
                    key=key)
    dataset_words = ("column", "training set", "prompts", "dataset", "split")
    if any(n.endswith("data/datasets.py") or n.endswith("data/open_r1.py") for n in names) or \
            (type(error).__name__ == "CannotRun" and any(word in str(error) for word in dataset_words)):
        key = "datasets" if getattr(config, "datasets", None) else "dataset_name"
        return dict(component="dataset", error=text, key=key)
    if any(n.endswith("model/loading.py") for n in names):
        return dict(component="model", error=text, key="model_name_or_path")
    return dict(component="training step", error=text, key=None)


# --- the run --------------------------------------------------------------------------------------------------------

def phases(steps: int) -> list[tuple[str, list[str]]]:
    first = ("first", ["max_steps=1", "save_strategy=steps", "save_steps=1"])
    if steps < 2:
        return [first]
    return [first, ("resume", [f"max_steps={steps}", "save_strategy=steps", "save_steps=1",
                               "resume_from_checkpoint=CHECKPOINT"])]


def checked_config(spec: dict, extra: list[str]):
    from grpo_runtime.launch.checking import check

    with contextlib.redirect_stdout(sys.stderr):
        result = check(spec["file"], [*spec["overrides"], *extra], spec["world_size"], spec["allow_env"],
                       spec["profiles"])
    if isinstance(result, int):
        raise SmokeFault("config", "the smoke's config did not validate (see the log)", None)
    return result


def run_runtime_phase(spec: dict, extra: list[str]):
    import grpo_runtime.setup as setup
    from grpo_runtime.launch.checking import apply_env
    from grpo_runtime.launch.cli import quiet_library_progress_bars, quiet_unused_kernel_notice
    from grpo_runtime.support import script_of
    from grpo_runtime.train import main

    result = checked_config(spec, extra)
    apply_env(result.env)
    quiet_library_progress_bars()
    quiet_unused_kernel_notice(result.config)
    original = setup.build_reward_funcs
    columns_key = "datasets" if result.config.datasets else "dataset_name"

    def build_reward_funcs(config, device, script=None):
        return wrap_rewards(original(config, device, script), columns_key)

    setup.build_reward_funcs = build_reward_funcs
    try:
        main(result.config, result.plan, assessed=True, launch=result.launch, script=script_of(result))
    finally:
        setup.build_reward_funcs = original
    return result


def run_trl_phase(spec: dict, extra: list[str]):
    """The same phase through TRL's own GRPOTrainer (to_trl's arguments, the same dataset and rewards)."""
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from grpo_runtime.data.rewards import resolve_reward_func
    from grpo_runtime.launch.checking import apply_env
    from grpo_runtime.launch.cli import quiet_library_progress_bars
    from grpo_runtime.setup import prompts
    from grpo_runtime.support import script_of

    result = checked_config(spec, extra)
    apply_env(result.env)
    quiet_library_progress_bars()
    config = result.config
    script = script_of(result)
    _, training_args, model_args, _ = config.to_model().to_trl()
    open_r1_args = script[1] if script is not None and script[0] == "open-r1" else None
    try:
        train = prompts(config, open_r1_args, "train")
        test = prompts(config, open_r1_args, "test") if config.eval_strategy not in (None, "no") else None
    except Exception as error:  # named below
        raise SmokeFault("dataset", f"{type(error).__name__}: {error}",
                         "datasets" if config.datasets else "dataset_name") from error
    if script is not None and script[0] == "open-r1":
        import grpo_runtime.data.open_r1 as open_r1

        funcs = open_r1.reward_funcs(config, script[1])
    else:
        funcs = [resolve_reward_func(name) for name in config.reward_funcs or []]
    columns_key = "datasets" if config.datasets else "dataset_name"
    tokenizer = AutoTokenizer.from_pretrained(config.model_name_or_path, padding_side="left")
    if open_r1_args is not None:
        import grpo_runtime.data.open_r1 as open_r1

        open_r1.apply_tokenizer_settings(tokenizer, open_r1_args)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    peft_config = None
    if config.use_peft:
        from trl import get_peft_config

        peft_config = get_peft_config(model_args)
    training_args.use_cpu = True
    trainer = GRPOTrainer(model=config.model_name_or_path, reward_funcs=wrap_rewards(funcs, columns_key),
                          args=training_args, train_dataset=train, eval_dataset=test, processing_class=tokenizer,
                          peft_config=peft_config)
    trainer.train(resume_from_checkpoint=config.resume_from_checkpoint or None)
    if config.save_only_model and "max_steps=1" in extra:
        checkpoint = Path(config.output_dir) / "checkpoint-1"
        if not (checkpoint / "optimizer.pt").exists() and not list(checkpoint.glob("global_step*")):
            raise SmokeFault("checkpoint resume", f"{checkpoint} holds the model only (save_only_model: true): "
                             "resuming it would restart the optimizer and the schedule", "save_only_model")
    return result


def fresh_accelerate_state(resume_port: int | None = None) -> None:
    """The first phase ended its run (`end_training` destroys the process group): the resumed run starts as a new
    process would, with accelerate's shared state cleared so that the next Accelerator sets it up again."""
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(reset_partial_state=True)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # A second process group on the launcher's store would read the first one's keys and hang in its first
        # collective: the resumed run rendezvouses on a store of its own, on a port the smoke chose free (the same
        # on every rank; a fixed one could be another run's).
        os.environ["TORCHELASTIC_USE_AGENT_STORE"] = "False"
        os.environ["MASTER_PORT"] = str(resume_port or int(os.environ.get("MASTER_PORT", "29500")) + 1)


def run(spec: dict) -> dict:
    rank = int(os.environ.get("RANK", "0"))
    output_dir = Path(spec["workdir"]) / "output"
    phase, config = "setup", None
    try:
        for phase, extra in phases(spec["steps"]):
            extra = [e.replace("CHECKPOINT", str(output_dir / "checkpoint-1")) for e in extra]
            if phase == "resume":
                fresh_accelerate_state(spec.get("resume_port"))
            if spec["engine"] == "trl":
                result = run_trl_phase(spec, extra)
            else:
                result = run_runtime_phase(spec, extra)
            config = result.config
            if phase == "first" and not (output_dir / "checkpoint-1").is_dir():
                raise SmokeFault("checkpoint save", f"no checkpoint-1 in {output_dir} after step 1", "save_steps")
    except BaseException as error:  # the report names it
        if isinstance(error, KeyboardInterrupt):
            raise
        if config is None:
            with contextlib.suppress(Exception):
                config = checked_config(spec, []).config
        found = classify(error, phase, config)
        refused = any(type(e).__name__ == "CannotRun" for e in chain_of(error))  # as `grpo train`: exit 3
        return dict(rank=rank, passed=False, phase=phase, refused=refused, traceback=frames(error),
                    exception=exception_of(error), **found)
    return dict(rank=rank, passed=True)


SMOKE_MATH_VERIFY_TIMEOUT_S = 300


def steady(seed: int) -> None:
    """What would make two smokes of one file differ, fixed: math_verify's wall-clock limit on an answer (5 s,
    which a busy machine's first parse can take; a timed-out answer scores None) is raised, and Python's `random`
    starts from the file's seed (the parent sets PYTHONHASHSEED to it as well)."""
    import grpo_runtime.data.reward_library as reward_library

    reward_library.MATH_VERIFY_TIMEOUT_S = SMOKE_MATH_VERIFY_TIMEOUT_S
    import random

    random.seed(seed)


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ[name] = "1"  # never download
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    steady(int(spec.get("seed", 0)))
    import grpo_runtime.data.open_r1 as open_r1

    open_r1.SMOKE_STAND_INS = True  # the parent stated each stand-in in its report (grpo_runtime.launch.smoke_rewards)
    outcome = run(spec)
    path = Path(spec["workdir"]) / f"result-{outcome['rank']}.json"
    partial = path.with_name(path.name + ".part")  # the parent polls these files: each appears whole, or not at all
    partial.write_text(json.dumps(outcome, default=str), encoding="utf-8")
    os.replace(partial, path)
    if not outcome["passed"]:
        print(f"grpo smoke: {outcome['component']}: {outcome['error']}", file=sys.stderr)
    return 0 if outcome["passed"] else 4


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
