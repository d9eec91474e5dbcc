"""`grpo smoke` and open-r1's code rewards (code, binary_code, cf_code, ioi_code).

The remote sandbox a recipe sends completions' code to (E2B, MorphCloud, Piston workers) is not on this machine, as
a cluster's paths are not: the smoke runs the same rewards on this machine's local executor instead, and says so in
the report's "code execution" group (`code_provider: local` asks for that executor: then it is exercised as
written). Synthetic rows for such a reward are small real problems in the shape of the dataset it reads
(grpo_runtime.smoke.problems), and before the run each kind of row's reference solution is scored, so a
machine that cannot run the code (no g++, limits too tight) is named before anything starts, not as a reward of 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_runtime.data.code_programs import CodeUnavailable
from grpo_runtime.smoke.plan import EXERCISED, SUBSTITUTED, SmokePlan, SmokeRefused
from grpo_runtime.smoke.problems import kind_of, reference_completion

EXECUTOR = "this machine's local executor: each completion's code in a subprocess with time, memory and process limits"


def state_code_execution(config, script, funcs: list, plan: SmokePlan) -> None:
    """The report's "code execution" group, after the reference solutions are checked on the synthetic rows."""
    import grpo_runtime.data.open_r1 as open_r1

    rewards = [f for f in funcs if kind_of(f) is not None]
    if not rewards or script is None or script[0] != "open-r1":
        return
    checked = check_references(rewards, plan)
    substituted = open_r1.substituted_sandboxes(config, script[1])
    if substituted:
        where = "; ".join(f"{name}: {service}" for name, service in substituted.items())
        plan.add(
            "code execution", SUBSTITUTED, f"{where} -> {EXECUTOR} (no client for the remote sandbox here); " + checked
        )
    else:
        plan.add("code execution", EXERCISED, f"{EXECUTOR} (code_provider: local, as written); {checked}")


def synthetic_rows_file(plan: SmokePlan) -> Path | None:
    data = plan.overrides.get("dataset_name")
    path = Path(str(data)) / "train.jsonl" if data else None
    return path if path is not None and path.is_file() else None


def check_references(rewards: list, plan: SmokePlan) -> str:
    """Score the reference solution of the first synthetic row of each language with each code reward; a score
    short of the reward's best is refused (component "code execution"). Returns what was checked, for the report."""
    path = synthetic_rows_file(plan)
    if path is None:
        return "the dataset's own rows carry no reference solution: nothing was checked before the run"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    said = [
        f"the reference solutions ({', '.join(check_reward(reward, rows))}) score {reward.best_score} with "
        f"{reward.__name__}"
        for reward in rewards
    ]
    return "checked before the run: " + "; ".join(said)


def check_reward(reward, rows: list[dict]) -> list[str]:
    """The languages whose first row's reference solution `reward` scored at its best; refused otherwise."""
    kind = kind_of(reward)
    firsts: dict[str, dict] = {}
    for row in rows:
        firsts.setdefault("cpp" if kind == "ioi_code" else row.get("language", "python"), row)
    for language, row in sorted(firsts.items()):
        completion = [{"role": "assistant", "content": reference_completion(kind, row)}]
        try:
            score = reward(completions=[completion], **{key: [value] for key, value in row.items()})[0]
        except CodeUnavailable as error:
            raise SmokeRefused("code execution", str(error), "reward_funcs") from None
        if score is None or abs(score - reward.best_score) > 1e-9:
            raise SmokeRefused(
                "code execution",
                f"this machine's local executor scored the reference {language} "
                f"solution of a synthetic problem {score} with {reward.__name__} instead of "
                f"{reward.best_score}: it cannot run the recipe's code here (see the limits in "
                "docs/smoke.md)",
                "reward_funcs",
            )
    return sorted(firsts)
