"""`--engine trl` (TRL's own GRPOTrainer) agrees with grpo_runtime on pass/fail, and on the failing component,
for a sound config and for each seeded fault of test_faults.py."""

import pytest

from .conftest import run_smoke

pytest.importorskip("trl")
pytestmark = [pytest.mark.slow, pytest.mark.oracle]

CASES = {
    "sound": ({}, None),
    "reward raises on one completion": (
        {"reward_funcs": ["my_rewards.fine", "my_rewards.picky"]},
        "reward function picky",
    ),
    "reward returns None": ({"reward_funcs": ["my_rewards.nothing"]}, "reward function nothing"),
    "missing dataset column": ({"reward_funcs": ["my_rewards.needs_answer"]}, "dataset column"),
    "PEFT target not in the model": ({"use_peft": True, "lora_target_modules": ["nonexistent_proj"]}, "PEFT target"),
    "checkpoint cannot be resumed": ({"save_only_model": True}, "checkpoint resume"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_trl_agrees(workspace, case):
    settings, component = CASES[case]
    code, report = run_smoke(workspace(**settings), "--engine", "trl")
    assert report["passed"] is (component is None), report
    assert code == (0 if component is None else 4)
    assert report.get("component") == component


def test_trl_agrees_on_a_failing_chat_template(workspace, failing_template_model):
    code, report = run_smoke(workspace(model_name_or_path=str(failing_template_model)), "--engine", "trl")
    assert code == 4 and report["component"] == "chat template", report
