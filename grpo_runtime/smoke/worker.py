"""One process of `grpo smoke`: `python -m grpo_runtime.smoke.worker SPEC.json` (under `accelerate launch`
for several processes). It runs the smoke's config through the ordinary run path (check, then train.main) for one
optimizer step with a checkpoint, then resumes that checkpoint for the remaining steps; `--engine trl` does the same
through TRL's GRPOTrainer. A failure is classified (grpo_runtime.smoke.faults: which component, which completion, the user's own
frames first) and written to RESULT-RANK.json for the parent (grpo_runtime.smoke.command).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from grpo_runtime.smoke.faults import SmokeFault, chain_of, classify, exception_of, frames, wrap_rewards

# --- the run --------------------------------------------------------------------------------------------------------


def phases(steps: int) -> list[tuple[str, list[str]]]:
    first = ("first", ["max_steps=1", "save_strategy=steps", "save_steps=1"])
    if steps < 2:
        return [first]
    return [
        first,
        ("resume", [f"max_steps={steps}", "save_strategy=steps", "save_steps=1", "resume_from_checkpoint=CHECKPOINT"]),
    ]


def checked_config(spec: dict, extra: list[str]):
    from grpo_runtime.launch.checking import check

    with contextlib.redirect_stdout(sys.stderr):
        result = check(
            spec["file"], [*spec["overrides"], *extra], spec["world_size"], spec["allow_env"], spec["profiles"]
        )
    if isinstance(result, int):
        raise SmokeFault("config", "the smoke's config did not validate (see the log)", None)
    return result


def run_runtime_phase(spec: dict, extra: list[str]):
    import grpo_runtime.setup as setup
    from grpo_runtime.launch.checking import apply_env
    from grpo_runtime.launch.process import quiet_library_progress_bars, quiet_unused_kernel_notice
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
    from grpo_runtime.launch.process import quiet_library_progress_bars
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
        raise SmokeFault(
            "dataset", f"{type(error).__name__}: {error}", "datasets" if config.datasets else "dataset_name"
        ) from error
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
    trainer = GRPOTrainer(
        model=config.model_name_or_path,
        reward_funcs=wrap_rewards(funcs, columns_key),
        args=training_args,
        train_dataset=train,
        eval_dataset=test,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    trainer.train(resume_from_checkpoint=config.resume_from_checkpoint or None)
    if config.save_only_model and "max_steps=1" in extra:
        checkpoint = Path(config.output_dir) / "checkpoint-1"
        if not (checkpoint / "optimizer.pt").exists() and not list(checkpoint.glob("global_step*")):
            raise SmokeFault(
                "checkpoint resume",
                f"{checkpoint} holds the model only (save_only_model: true): "
                "resuming it would restart the optimizer and the schedule",
                "save_only_model",
            )
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
        return dict(
            rank=rank,
            passed=False,
            phase=phase,
            refused=refused,
            traceback=frames(error),
            exception=exception_of(error),
            **found,
        )
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

    open_r1.SMOKE_STAND_INS = True  # the parent stated each stand-in in its report (grpo_runtime.smoke.rewards)
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
