"""The smoke's substitutions in order, one part module each (the model, the dataset, code execution, the rewards,
the settings, the world size and batch), then the config with them checked again, as the run will check it."""

from __future__ import annotations

from pathlib import Path

from grpo_runtime.launch.checking import EXIT_CANNOT_RUN, check


def prepare(args, result, plan, workdir: Path):
    """Fill `plan`; returns the checked smoke config, or a report update when it stops before running."""
    from grpo_runtime.smoke.code import state_code_execution
    from grpo_runtime.smoke.data import strict_paths_check, substitute_dataset
    from grpo_runtime.smoke.model import substitute_model
    from grpo_runtime.smoke.rewards import exercised_names, reward_functions, state_branch_rewards
    from grpo_runtime.smoke.settings import (
        bound_batch,
        cap_generation_kwargs,
        choose_world_size,
        substitute_settings,
        written_groups,
    )
    from grpo_runtime.support import script_of
    from grpo_schema import check_file

    config, raw = result.config, result.raw if isinstance(result.raw, dict) else {}
    profiles = list(args.profiles or result.profile_args)
    strict_paths_check(config, plan, script_of(result))
    funcs = reward_functions(result)
    substitute_model(config, plan, workdir)
    substitute_dataset(config, raw, funcs, plan, workdir, script_of(result))
    state_code_execution(config, script_of(result), funcs, plan)
    state_branch_rewards(config, script_of(result), plan)
    substitute_settings(config, raw, plan, workdir)

    def checked(size):
        sets = [*args.overrides, *plan.set_strings(), f"num_processes={size}"]
        return check_file(
            args.file,
            world_size=size,
            overrides=sets,
            allow_env=args.allow_env,
            profiles=profiles,
            allow_profile_import=True,
        )

    plan.world_size = choose_world_size(args.file, config, plan, result.world_size, checked)
    bound_batch(config, plan, checked)
    cap_generation_kwargs(config, plan)
    if "num_processes" in result.launch or plan.world_size != result.world_size:
        plan.overrides["num_processes"] = plan.world_size
    written_groups(config, result.plan, plan, args.steps, exercised_names(funcs) if funcs else ["the reward model"])
    smoke_result = check(args.file, [*args.overrides, *plan.set_strings()], plan.world_size, args.allow_env, profiles)
    if isinstance(smoke_result, int):
        return {
            "exit_code": EXIT_CANNOT_RUN,
            "component": "substitution",
            "error": "the config with the smoke's substitutions does not validate (see the log)",
        }
    if args.engine == "grpo_runtime":
        refused = runtime_refusals(smoke_result)
        if refused is not None:
            return refused
    return smoke_result


def runtime_refusals(smoke_result) -> dict | None:
    """What grpo_runtime refuses in the smoke config, but for what the substitutions refuse in its place: a report
    update naming each, or None."""
    from grpo_runtime.smoke.rewards import substituted_refusals
    from grpo_runtime.support import assess

    substituted = substituted_refusals(smoke_result)
    refusals = [d for d in assess(smoke_result, "launch") if d.severity == "error" and d.message not in substituted]
    if refusals:
        return {
            "exit_code": EXIT_CANNOT_RUN,
            "component": "runtime",
            "error": "grpo_runtime cannot run it as written: "
            + "; ".join(f"{d.code} {', '.join(d.fields)}: {d.message}" for d in refusals),
        }
    return None
