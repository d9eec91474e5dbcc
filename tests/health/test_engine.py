"""The run-health engine on hand-written run records (no torch): each rule fires on its pathology with its
numbers and steps and stays quiet on healthy curves; bad inputs (not a run, corrupt lines, a run still being
written, older TRL names) give a clear finding or error, never an exception; nothing is written into the run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from grpo_schema.commands.health import health_command
from grpo_schema.engine.codes import CODES
from grpo_schema.health import HealthMonitor, HealthSettings, check_run_dir
from grpo_schema.health.rules import HEALTH_RULES
from tests.support.cli import grpo


def healthy(step: int) -> dict:
    return {
        "step": step,
        "loss": 0.01,
        "grad_norm": 0.5,
        "learning_rate": 1e-6,
        "reward": 0.1 + 0.02 * step,
        "reward_std": 0.3,
        "frac_reward_zero_std": 0.1,
        "completions/mean_length": 120.0,
        "completions/clipped_ratio": 0.05,
        "entropy": 0.8,
        "kl": 0.02,
        "clip_ratio/region_mean": 0.01,
        "rewards/acc/mean": 0.3,
        "rewards/acc/std": 0.4,
        "rewards/acc/none_frac": 0.0,
        "rewards/acc/nan_frac": 0.0,
        "rewards/acc/seconds": 0.4,
        "sampling/importance_sampling_ratio/mean": 1.0,
        "sampling/sampling_logp_difference/mean": 0.01,
    }


def codes_for(records, settings=None, events=(), config=None) -> dict:
    monitor = HealthMonitor(settings, config)
    for record in records:
        monitor.observe_metrics(record)
    for event in events:
        monitor.observe_event(**event)
    return {f.code: f for f in monitor.findings()}


def test_a_healthy_run_gives_no_finding():
    assert codes_for([healthy(s) for s in range(1, 200)]) == {}


@pytest.mark.parametrize(
    "change, code",
    [
        ({"frac_reward_zero_std": 1.0}, "GRPO-A001"),
        ({"rewards/acc/none_frac": 0.3}, "GRPO-A002"),
        ({"rewards/acc/nan_frac": 0.05}, "GRPO-A003"),
        ({"rewards/acc/seconds": 45.0}, "GRPO-A004"),
        ({"loss": math.nan}, "GRPO-A005"),
        ({"grad_norm": math.inf}, "GRPO-A005"),
        ({"completions/clipped_ratio": 0.97, "reward": 0.2}, "GRPO-A006"),
        ({"grad_norm": 0.0}, "GRPO-A007"),
        ({"entropy": 0.001}, "GRPO-A008"),
        ({"kl": 4.0}, "GRPO-A010"),
        ({"clip_ratio/region_mean": 0.4}, "GRPO-A011"),
        ({"sampling/importance_sampling_ratio/mean": 0.7}, "GRPO-A013"),
        ({"sampling/sampling_logp_difference/mean": 1.2}, "GRPO-A013"),
        ({"completions/mean_length": 1.0}, "GRPO-A017"),
    ],
)
def test_each_metric_rule_fires_on_its_pathology_from_step_10(change, code):
    records = [healthy(s) if s < 10 else {**healthy(s), **change} for s in range(1, 21)]
    found = codes_for(records)
    assert code in found, sorted(found)
    finding = found[code]
    assert finding.steps is not None and finding.steps[0] >= 10 and CODES[code].title
    assert finding.to_dict()["code"] == code and finding.to_dict()["fields"] is not None


def test_a_reward_constant_from_the_start_is_named_but_one_that_saturates_later_is_not():
    constant = [{**healthy(s), "rewards/acc/std": 0.0, "rewards/acc/mean": 1.0} for s in range(1, 6)]
    found = codes_for(constant)["GRPO-A009"]
    assert "reward function acc gave every completion the same score (1)" in found.diagnostic.message
    saturating = [healthy(s) if s < 14 else {**healthy(s), "rewards/acc/std": 0.0} for s in range(1, 21)]
    assert "GRPO-A009" not in codes_for(saturating)  # a format reward the model has learned: not a defect
    most = [healthy(s) if s < 5 else {**healthy(s), "rewards/acc/std": 0.0} for s in range(1, 21)]
    assert codes_for(most)["GRPO-A009"].severity == "info"  # ... said once it is most of the run


def test_a_learning_rate_still_0_from_the_start_but_not_a_schedule_that_ends_at_0():
    warmup = [{**healthy(s), "learning_rate": 0.0} for s in range(1, 6)]
    found = codes_for(warmup, config={"warmup_steps": 1000})["GRPO-A012"]
    assert found.steps == (1, 5) and found.diagnostic.fix.set == {"warmup_steps": 0}
    decayed = [healthy(s) if s < 15 else {**healthy(s), "learning_rate": 0.0} for s in range(1, 21)]
    assert "GRPO-A012" not in codes_for(decayed)  # cosine and linear schedules end at 0
    early = [healthy(s) if s < 8 else {**healthy(s), "learning_rate": 0.0} for s in range(1, 21)]
    assert codes_for(early)["GRPO-A012"].severity == "info"  # 0 on most of the run: said, never hidden


def test_a_blip_shorter_than_min_steps_is_noise_and_min_steps_is_a_setting():
    records = [healthy(s) for s in range(1, 21)]
    records[5] = {**records[5], "frac_reward_zero_std": 1.0}
    records[6] = {**records[6], "frac_reward_zero_std": 1.0}
    assert "GRPO-A001" not in codes_for(records)
    assert "GRPO-A001" in codes_for(records, HealthSettings(min_steps=2))


def test_clipped_completions_while_the_reward_rises_are_left_alone():
    def rising(step: int, clipped: float) -> dict:
        return {
            **healthy(step),
            "completions/clipped_ratio": clipped,
            "reward": 0.05 * step,
            "rewards/acc/mean": 0.05 * step,
        }

    brief = [rising(s, 1.0 if 10 <= s < 20 else 0.2) for s in range(1, 30)]
    assert "GRPO-A006" not in codes_for(brief)
    most = codes_for([rising(s, 1.0) for s in range(1, 30)])  # cut on most of the run: said, as information
    assert most["GRPO-A006"].severity == "info" and "acc rose" in most["GRPO-A006"].diagnostic.message
    flat = [{**healthy(s), "completions/clipped_ratio": 1.0, "reward": 0.3} for s in range(1, 30)]
    assert "GRPO-A006" in codes_for(flat, config={"max_completion_length": 512})
    assert codes_for(flat, config={"max_completion_length": 512})["GRPO-A006"].diagnostic.fix.set == {
        "max_completion_length": 1024
    }


def test_resume_events_and_reward_calls():
    found = codes_for([], events=[{"kind": "resume", "from_step": 100, "total_steps": 100, "checkpoint": "c"}])
    assert found["GRPO-A014"].severity == "error" and found["GRPO-A014"].diagnostic.fix.set == {"max_steps": 200}
    replay = [{"kind": "resume", "from_step": 40, "total_steps": 100, "ignore_data_skip": True}]
    assert set(codes_for([], events=replay)) == {"GRPO-A015"}
    monitor = HealthMonitor()
    monitor.observe_reward_call("judge", 1, 61.0, [1.0, None, math.nan, 0.0])
    found = {f.code: f for f in monitor.findings()}
    assert {"GRPO-A002", "GRPO-A003", "GRPO-A004"} <= set(found)
    assert "61.0 s" in found["GRPO-A004"].diagnostic.message and found["GRPO-A002"].values == (0.25,)


def test_identical_and_flat_groups_from_completion_rows():
    monitor = HealthMonitor()
    for step in range(1, 5):
        monitor.observe_completions(
            [
                {
                    "step": step,
                    "prompt": f"p{g}",
                    "completion": "same",
                    "rewards": {"f": 1.0},
                    "reward": 1.0,
                    "truncated": False,
                }
                for g in range(3)
                for _ in range(4)
            ]
        )
    codes = {f.code for f in monitor.findings()}
    assert {"GRPO-A001", "GRPO-A016"} <= codes


def test_every_rule_has_a_declared_code_and_title():
    assert len({rule.code for rule in HEALTH_RULES}) == len(HEALTH_RULES) >= 15
    for rule in HEALTH_RULES:
        assert rule.code.startswith("GRPO-A") and CODES[rule.code].severity == rule.severity


def write_lines(path: Path, records, tail: bytes = b"") -> None:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)


def test_bad_inputs_give_findings_or_errors_never_a_traceback(tmp_path, capsys):
    assert health_command([str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    (tmp_path / "notarun").mkdir()
    (tmp_path / "notarun" / "notes.txt").write_text("hello")
    assert health_command([str(tmp_path / "notarun")]) == 2
    assert "not a run directory" in capsys.readouterr().err

    run = tmp_path / "run"
    run.mkdir()
    records = [{**healthy(s), "frac_reward_zero_std": 1.0} for s in range(1, 6)]
    text = b"".join(json.dumps(r).encode() + b"\n" for r in records[:2]) + b'{"step": 3, "loss": 0.\n[1, 2]\n'
    text += b"".join(json.dumps(r).encode() + b"\n" for r in records[3:]) + b'{"step": 6, "lo'
    (run / "metrics.jsonl").write_bytes(text)
    before = sorted(p.name for p in run.iterdir())
    report = check_run_dir(run)
    assert sorted(p.name for p in run.iterdir()) == before
    bad = [f for f in report.findings if f.code == "GRPO-A090"]
    assert [f.diagnostic.line for f in bad] == [3, 4] and report.live  # corrupt lines; the last one is being written
    assert "GRPO-A001" in {f.code for f in report.findings} and report.steps == 5
    assert health_command([str(run), "--format", "github"]) == 0
    out = capsys.readouterr().out
    assert f"file={run}/metrics.jsonl,line=3" in out and "title=GRPO-A090" in out
    assert health_command([str(run), "--set", "nosuch=1"]) == 2
    assert "unknown health setting" in capsys.readouterr().err


def test_a_trl_directory_with_older_metric_names(tmp_path, capsys):
    run = tmp_path / "trl-0.16"
    (run / "checkpoint-5").mkdir(parents=True)
    history = [
        {
            "step": s,
            "loss": 0.0,
            "grad_norm": 0.0,
            "learning_rate": 1e-6,
            "completion_length": 256.0,
            "rewards/accuracy_reward": 0.0,
            "reward": 0.0,
            "reward_std": 0.0,
            "clip_ratio": 0.0,
        }
        for s in range(1, 6)
    ] + [{"step": 5, "train_runtime": 12.0, "train_loss": 0.0}]
    (run / "checkpoint-5" / "trainer_state.json").write_text(
        json.dumps({"global_step": 5, "max_steps": 5, "log_history": history})
    )
    report = check_run_dir(run)
    assert report.source == "trl" and report.steps == 5 and not report.errors
    assert {f.code for f in report.findings} == {"GRPO-A007", "GRPO-A009"}  # 0.0 at every step: a dead function
    assert health_command([str(run), "--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    assert {result["ruleId"] for result in sarif["runs"][0]["results"]} == {"GRPO-A007", "GRPO-A009"}
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "trainer_state.json").write_text("{not json")
    assert health_command([str(broken)]) == 2


def test_follow_prints_each_finding_once_and_ends_when_the_run_is_saved(tmp_path):
    run = tmp_path / "live"
    run.mkdir()
    write_lines(run / "metrics.jsonl", [{**healthy(s), "grad_norm": 0.0} for s in range(1, 5)])
    (run / "model.safetensors").write_bytes(b"")
    done = grpo("health", str(run), "--follow", "--interval", "0.1")
    assert done.returncode == 0 and done.stdout.count("GRPO-A007") == 1, done.stdout + done.stderr


def test_grpo_codes_lists_the_run_health_codes():
    done = grpo("codes", "GRPO-A001")
    assert done.returncode == 0 and "prompt groups with no learning signal" in done.stdout
