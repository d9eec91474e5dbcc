"""`grpo smoke` and the config's reward functions: imported before anything starts (an import that fails is named),
with the stand-ins the smoke gives what cannot run here: the local executor for an open-r1 recipe's remote code
sandbox (grpo_runtime.smoke.code states it) and grpo_runtime.data.branch_rewards for a reward of open-r1's
experiment branches (stated here, in the report's "reward functions" group)."""

from __future__ import annotations

from grpo_runtime.smoke.plan import SUBSTITUTED, SmokePlan, SmokeRefused


def reward_functions(result) -> list:
    """The configured reward functions, imported, with the smoke's stand-ins."""
    from grpo_runtime.data.rewards import resolve_reward_func
    from grpo_runtime.support import script_of

    script = script_of(result)
    if script is not None and script[0] == "open-r1":
        import grpo_runtime.data.open_r1 as open_r1

        try:
            return open_r1.reward_funcs(result.config, script[1], stand_ins=True)
        except Exception as error:  # named
            raise SmokeRefused("reward function", str(error), "reward_funcs") from None
    funcs = []
    for name in result.config.reward_funcs or []:
        try:
            funcs.append(resolve_reward_func(name))
        except Exception as error:  # an import error of the user's module, named
            raise SmokeRefused(
                f"reward function {name}",
                f"cannot import the reward function {name}: {type(error).__name__}: {error}",
                "reward_funcs",
                name,
            ) from None
    return funcs


def exercised_names(funcs: list) -> list[str]:
    """The names of the rewards that run as written (a stand-in is stated on a line of its own)."""
    from grpo_runtime.data.rewards import reward_name

    return [reward_name(f) for f in funcs if not getattr(f, "stand_in_for", None)]


def state_branch_rewards(config, script, plan: SmokePlan) -> None:
    """A "reward functions" line for the experiment branches' rewards the smoke scores with a stand-in."""
    if script is None or script[0] != "open-r1":
        return
    from grpo_runtime.data.branch_rewards import DESCRIPTIONS
    from grpo_runtime.data.open_r1 import BRANCH_REWARDS, reward_names

    named = [name for name in reward_names(config) if name in BRANCH_REWARDS]
    if named:
        said = "; ".join(f"{name} -> {DESCRIPTIONS[name]}" for name in named)
        plan.add(
            "reward functions",
            SUBSTITUTED,
            f"{said} (rewards of open-r1's experiment branches, whose code "
            "is not here: scored by a stand-in of the same kind; grpo train refuses them)",
        )


def substituted_refusals(result) -> set[str]:
    """The refusals `grpo train` gives for what the smoke runs with a stand-in (a sandboxed code reward, a branch's
    reward), each stated in the report instead."""
    from grpo_runtime.support import script_of

    script = script_of(result)
    if script is None or script[0] != "open-r1":
        return set()
    import grpo_runtime.data.open_r1 as open_r1

    kept = set(open_r1.refusals(result.config, script[1], stand_ins=True))
    return {f"reward_funcs: {m}" for m in open_r1.refusals(result.config, script[1]) if m not in kept}
