"""Run health inside TRL 1.16's own GRPOTrainer through grpo_schema.health.trl.RunHealthCallback: the same
seeded pathological runs as tests/runtime/test_health_runs.py, found by the same codes in a TRL run's logs, and
`grpo health` reading the directory TRL's trainer wrote."""

import json
import math

import pytest

from grpo_runtime.launch.demo import demo_rows
from grpo_schema.commands.health import health_command
from grpo_schema.health.trl import RunHealthCallback
from tests.runtime.trl_harness import build_trainer  # noqa: E402  (skips without trl 1.16)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


@pytest.fixture(scope="module")
def dataset():
    from datasets import Dataset

    rows = demo_rows()
    return Dataset.from_dict({"prompt": [r["prompt"] for r in rows], "target": [r["target"] for r in rows]})


def target_word_reward(completions, target, **kwargs):
    from grpo_runtime.data.reward_library import target_word_reward as score

    return score(completions, target)


def constant_reward(completions, **kwargs):
    return [1.0] * len(completions)


def patchy_reward(completions, **kwargs):
    return [None if i % 4 == 3 else float("nan") if i % 5 == 4 else 0.1 * (i % 3) for i in range(len(completions))]


def noise_reward(completions, **kwargs):
    return [((7 * i + len(str(c))) % 10) / 10 for i, c in enumerate(completions)]


DEMO = dict(
    per_device_train_batch_size=16,
    num_generations=8,
    max_completion_length=6,
    temperature=1.0,
    loss_type="dapo",
    beta=0.0,
    learning_rate=0.003,
    lr_scheduler_type="constant",
    optim="adamw_torch",
)


def run(model_dir, out, dataset, rewards, health, resume=None, **overrides):
    settings = {**DEMO, "max_steps": 4, **overrides}
    trainer = build_trainer(
        model_dir, out, reward_funcs=health.watch(list(rewards)), dataset=dataset, callbacks=[health], **settings
    )
    trainer.train(resume_from_checkpoint=resume)
    return trainer


def codes(health) -> set[str]:
    return {f.code for f in health.reported}


def test_a_healthy_trl_run_gives_no_finding(tiny_model_dir, tmp_path, dataset, capsys):
    health = RunHealthCallback()
    trainer = run(
        tiny_model_dir,
        tmp_path / "ok",
        dataset,
        [target_word_reward],
        health,
        max_steps=20,
        save_strategy="steps",
        save_steps=20,
    )
    assert health.reported == [] and health.findings() == []
    rewards = [r["reward"] for r in trainer.state.log_history if "reward" in r]
    assert sum(rewards[-5:]) / 5 > sum(rewards[:5]) / 5  # it learns
    assert health_command([str(tmp_path / "ok")]) == 0
    assert "healthy, 0 findings" in capsys.readouterr().out


def test_a_constant_reward_is_found_in_the_trl_run_and_in_its_directory(tiny_model_dir, tmp_path, dataset, capsys):
    health = RunHealthCallback()
    run(
        tiny_model_dir,
        tmp_path / "flat",
        dataset,
        [constant_reward],
        health,
        save_strategy="steps",
        save_steps=4,
        log_completions=True,
    )
    assert {"GRPO-A001", "GRPO-A009", "GRPO-A007"} <= codes(health)
    assert "grpo health: GRPO-A001 warning" in capsys.readouterr().err
    # grpo health reads what TRL's own trainer wrote: checkpoint-4/trainer_state.json and completions/*.parquet
    assert (tmp_path / "flat" / "checkpoint-4" / "trainer_state.json").is_file()
    assert sorted((tmp_path / "flat" / "completions").glob("*.parquet"))
    assert health_command([str(tmp_path / "flat"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)["runs"][0]
    assert report["source"] == "trl" and report["steps"] == 4
    assert {"GRPO-A001", "GRPO-A009", "GRPO-A007", "GRPO-A016"} & {f["code"] for f in report["findings"]} >= {
        "GRPO-A001",
        "GRPO-A009",
        "GRPO-A007",
    }


def test_a_reward_returning_none_and_nan_is_named_with_its_rate(tiny_model_dir, tmp_path, dataset):
    health = RunHealthCallback()
    run(tiny_model_dir, tmp_path / "patchy", dataset, [patchy_reward], health, max_steps=2)
    found = {f.code: f for f in health.reported}
    assert "patchy_reward" in found["GRPO-A002"].diagnostic.message
    assert found["GRPO-A002"].values == (0.25,)  # 4 of every 16
    assert found["GRPO-A003"].values == (pytest.approx(3 / 16),)  # 4, 9, 14 of 16 (19 would be None)


def test_completions_cut_at_a_tiny_limit_are_found(tiny_model_dir, tmp_path, dataset):
    health = RunHealthCallback()
    run(
        tiny_model_dir,
        tmp_path / "cut",
        dataset,
        [noise_reward],
        health,
        max_completion_length=2,
        generation_kwargs={"min_new_tokens": 3},
        max_steps=5,
    )
    assert "GRPO-A006" in codes(health) and "GRPO-A001" not in codes(health)


def test_a_learning_rate_that_gives_nan_stops_the_trl_run(tiny_model_dir, tmp_path, dataset):
    health = RunHealthCallback(stop_on_fatal=True)
    trainer = run(
        tiny_model_dir,
        tmp_path / "nan",
        dataset,
        [target_word_reward],
        health,
        learning_rate=1e12,
        max_grad_norm=0.0,
        steps_per_generation=2,
        max_steps=8,
    )
    assert "GRPO-A005" in codes(health)
    assert health.stopped_at is not None and trainer.state.global_step < 8
    norms = [r.get("grad_norm") for r in trainer.state.log_history if "grad_norm" in r]
    assert any(n is None or not math.isfinite(n) for n in norms)


def test_a_resume_that_trains_no_step_is_found(tiny_model_dir, tmp_path, dataset):
    out = tmp_path / "resumed"
    run(
        tiny_model_dir,
        out,
        dataset,
        [target_word_reward],
        RunHealthCallback(),
        max_steps=2,
        save_strategy="steps",
        save_steps=2,
    )
    health = RunHealthCallback()
    trainer = run(
        tiny_model_dir,
        out,
        dataset,
        [target_word_reward],
        health,
        resume=True,
        max_steps=2,
        save_strategy="steps",
        save_steps=2,
    )
    assert trainer.state.global_step <= 3 and "GRPO-A014" in codes(health)  # HF runs one step past max_steps
    finding = next(f for f in health.reported if f.code == "GRPO-A014")
    assert finding.severity == "error" and finding.diagnostic.fix.set == {"max_steps": 4}
