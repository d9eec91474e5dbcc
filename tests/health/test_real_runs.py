"""Run health on trainer states shaped like real runs of every TRL era (tests/health/data, written by
make_states.py): an fp16 overflow skip is a warning, a NaN loss still fatal; dead reward functions found from their
means alone; what each era cannot show is said; every finding states its extent; an exemption never hides a
condition of most of the run; a logging_steps artefact is not a finding; a run too short or not GRPO is not
called healthy; fixes sized from the run; a state file read by its content, a truncated one named with its byte."""

from __future__ import annotations

import json
import math
import shutil

from grpo_schema.commands.health import health_command
from grpo_schema.health import HealthMonitor, check_run_dir
from tests.support.health_states import DATA, run_dir, state


def by_code(report) -> dict:
    found: dict = {}
    for finding in report.findings:
        found.setdefault(finding.code, []).append(finding)
    return found


def breaks(data: bytes) -> int:
    """The byte where Python's JSON parser finds a truncated document broken."""
    try:
        json.loads(data)
    except ValueError as exc:
        return exc.pos
    raise AssertionError("not broken")


def monitor_of(records, config=None) -> HealthMonitor:
    monitor = HealthMonitor(config=config)
    for record in records:
        monitor.observe_metrics(record)
    return monitor


# --- fp16 overflow ---------------------------------------------------------------------------------------------
def test_an_fp16_overflow_skip_is_a_warning_with_its_count_not_a_fatal_error(tmp_path, capsys):
    report = check_run_dir(run_dir(tmp_path, "trl-1.x-fp16-overflow"))
    found = by_code(report)
    assert "GRPO-A005" not in found, [f.diagnostic.message for f in report.findings]
    skip = found["GRPO-A018"][0]
    assert skip.severity == "warning" and not skip.fatal
    assert "2 of 80 logged steps" in skip.diagnostic.message and skip.extent["stretches"] == [[23, 23], [61, 61]]
    assert health_command([str(tmp_path / "trl-1.x-fp16-overflow")]) == 0  # a warning: exit 0
    capsys.readouterr()


def test_a_nan_loss_or_a_grad_norm_that_stays_non_finite_is_still_fatal():
    records = [r for r in state("trl-1.x-fp16-overflow")["log_history"] if "loss" in r]
    nan_loss = [dict(r) for r in records]
    nan_loss[40]["loss"] = math.nan
    fatal = [f for f in monitor_of(nan_loss).findings() if f.code == "GRPO-A005"]
    assert fatal and fatal[0].fatal and fatal[0].metric == "loss" and fatal[0].steps[0] == 41
    stuck = [dict(r) for r in records]
    for index in (50, 51, 52):
        stuck[index]["grad_norm"] = math.inf
    fatal = [f for f in monitor_of(stuck).findings() if f.code == "GRPO-A005"]
    assert fatal and fatal[0].fatal and fatal[0].steps == (51, 61) and "from step 51" in fatal[0].diagnostic.message
    no_scaler = [f for f in monitor_of(records, {"fp16": False}).findings() if f.code in ("GRPO-A005", "GRPO-A018")]
    assert [(f.code, f.steps[0]) for f in no_scaler] == [("GRPO-A005", 23)]  # bf16/fp32: the NaN is applied


# --- rewards ---------------------------------------------------------------------------------------------------
def test_dead_reward_functions_are_found_from_their_means_when_no_std_is_logged(tmp_path):
    report = check_run_dir(run_dir(tmp_path, "trl-0.16-dead-rewards"))
    dead = {f.subject: f for f in by_code(report).get("GRPO-A009", [])}
    assert set(dead) == {"format_reward", "soft_format_penalty"}, [f.diagnostic.message for f in report.findings]
    assert "the same score (0)" in dead["format_reward"].diagnostic.message
    assert "the same score (-1)" in dead["soft_format_penalty"].diagnostic.message
    assert "no std" in dead["format_reward"].diagnostic.message
    assert dead["format_reward"].extent["logged_steps"] == 250 == dead["format_reward"].extent["of"]
    assert not report.healthy


# --- eras ------------------------------------------------------------------------------------------------------
def test_the_report_names_the_era_and_the_rules_it_could_not_judge(tmp_path):
    old = check_run_dir(run_dir(tmp_path, "trl-0.16-dead-rewards"))
    assert old.era == "TRL before 0.17"
    missing = {item["code"] for item in old.not_judged}
    assert {"GRPO-A001", "GRPO-A006", "GRPO-A008"} <= missing and "GRPO-A005" not in missing
    assert any("GRPO-A008" in note and "entropy" in note for note in old.notes)
    new = check_run_dir(run_dir(tmp_path, "trl-1.x-fp16-overflow"))
    assert new.era.startswith("TRL 0.20 or later")
    assert not {"GRPO-A001", "GRPO-A006", "GRPO-A008"} & {item["code"] for item in new.not_judged}
    assert new.to_dict()["era"] == new.era and "not_judged" in new.to_dict()


# --- extent ----------------------------------------------------------------------------------------------------
def test_every_finding_states_its_extent_over_the_whole_run(tmp_path):
    report = check_run_dir(run_dir(tmp_path, "trl-1.x-zero-std-and-kl"))
    found = by_code(report)
    zero = found["GRPO-A001"][0]
    assert zero.extent["logged_steps"] == 84 and zero.extent["of"] == 160
    assert zero.extent["stretches"] == [[3, 8], [20, 60], [90, 126]] and zero.steps == (3, 126)
    assert "84 of 160 logged steps" in zero.diagnostic.message
    kl = found["GRPO-A010"][0]
    assert kl.extent["logged_steps"] == 70 and kl.extent["stretches"] == [[16, 19], [95, 160]]
    assert kl.extent["first"] == 16 and kl.extent["worst"] > 130 and "70 of 160 logged steps" in kl.diagnostic.message
    assert zero.to_dict()["extent"] == zero.extent  # additive: every old key is still there
    assert {"code", "severity", "message", "metric", "steps", "values", "fatal"} <= set(zero.to_dict())


# --- clipped completions ---------------------------------------------------------------------------------------
def test_clipping_hidden_by_a_saturating_format_reward_is_found_and_its_fix_sized_from_the_run(tmp_path):
    report = check_run_dir(run_dir(tmp_path, "trl-1.x-clipped-saturating"))
    clipped = by_code(report)["GRPO-A006"][0]
    assert clipped.severity == "warning" and clipped.extent["logged_steps"] == 28
    fix = clipped.diagnostic.fix
    assert fix.set == {"max_completion_length": 256} and "128" in fix.title and "%" in fix.title
    assert "128" in clipped.diagnostic.message


def test_an_exemption_never_hides_clipping_on_most_of_the_run():
    rising = [
        {
            "step": s,
            "completions/clipped_ratio": 1.0,
            "reward": 0.05 * s,
            "reward_std": 0.3,
            "completions/mean_length": 6.0,
        }
        for s in range(1, 30)
    ]
    found = [f for f in monitor_of(rising, {"max_completion_length": 6}).findings() if f.code == "GRPO-A006"]
    assert len(found) == 1 and found[0].severity == "info" and "29 of 29 logged steps" in found[0].diagnostic.message


def test_the_clipping_rule_judges_the_reward_of_the_cut_completions_not_the_total():
    monitor = HealthMonitor(config={"max_completion_length": 64})
    for step in range(1, 13):
        rows = [
            {
                "step": step,
                "prompt": f"p{g}",
                "completion": f"c{g}{i}",
                "rewards": {"acc": 0.1 * (i % 2)},
                "reward": 0.1 * (i % 2),
                "truncated": True,
            }
            for g in range(2)
            for i in range(7)
        ]
        rows += [
            {
                "step": step,
                "prompt": "q",
                "completion": "done",
                "rewards": {"acc": 1.0 * step},
                "reward": 1.0 * step,
                "truncated": False,
            }
        ]
        monitor.observe_completions(rows)
        monitor.observe_metrics(
            {"step": step, "completions/clipped_ratio": 14 / 15, "reward": (0.3 + step) / 15, "reward_std": 0.2}
        )
    found = [f for f in monitor.findings() if f.code == "GRPO-A006"]
    assert found and found[0].severity == "warning"


# --- logging artefacts, short and non-GRPO runs ----------------------------------------------------------------
def test_a_grad_norm_logged_once_every_10_steps_is_not_evidence_of_no_gradient(tmp_path):
    report = check_run_dir(run_dir(tmp_path, "trl-1.x-logging-steps-10"))
    assert "GRPO-A007" not in by_code(report), [f.diagnostic.message for f in report.findings]
    assert any("logging_steps" in note and "grad_norm" in note for note in report.notes), report.notes
    flat = state("trl-1.x-logging-steps-10")["log_history"][:-1]
    for record in flat:
        record.update(grad_norm=0.0, frac_reward_zero_std=1.0, reward_std=0.0)
    assert "GRPO-A007" in {f.code for f in monitor_of(flat).findings()}  # the window agrees: no signal at all


def test_one_logged_step_is_too_short_to_judge_and_an_sft_state_is_not_a_grpo_run(tmp_path, capsys):
    short = check_run_dir(run_dir(tmp_path, "trl-one-step"))
    assert short.verdict == "too short to judge" and not short.healthy
    assert any(
        f.code == "GRPO-A092" and "1 logged step: too short to judge" in f.diagnostic.message for f in short.findings
    )
    sft = check_run_dir(run_dir(tmp_path, "trl-sft"))
    assert sft.verdict == "not a GRPO run" and not sft.healthy
    assert any("no GRPO metric" in f.diagnostic.message for f in sft.findings)
    assert health_command([str(tmp_path / "trl-sft"), str(tmp_path / "trl-one-step")]) == 0
    out = capsys.readouterr().out
    assert "not a GRPO run" in out and "too short to judge" in out and "healthy" not in out


# --- fixes -----------------------------------------------------------------------------------------------------
def test_fixes_use_the_run_s_own_values_and_never_invent_one():
    flat = [{"step": s, "frac_reward_zero_std": 1.0, "reward": 0.0, "reward_std": 0.0} for s in range(1, 6)]
    unknown = next(f for f in monitor_of(flat).findings() if f.code == "GRPO-A001")
    assert unknown.diagnostic.fix is None or "num_generations" not in unknown.diagnostic.fix.set
    known = next(f for f in monitor_of(flat, {"num_generations": 4}).findings() if f.code == "GRPO-A001")
    assert known.diagnostic.fix.set == {"num_generations": 8}
    clipped = [
        {
            "step": s,
            "completions/clipped_ratio": 0.95,
            "reward": 0.2,
            "reward_std": 0.1,
            "completions/mean_length": 500.0,
            "completions/max_length": 512.0,
        }
        for s in range(1, 6)
    ]
    a006 = next(
        f for f in monitor_of(clipped, {"mask_truncated_completions": True}).findings() if f.code == "GRPO-A006"
    )
    assert a006.diagnostic.fix.set == {"max_completion_length": 1024} and "95%" in a006.diagnostic.fix.title
    assert not any("mask_truncated_completions" in alt.set for alt in a006.diagnostic.alternatives)


# --- reading state files ---------------------------------------------------------------------------------------
def test_a_renamed_state_file_is_read_by_its_content(tmp_path):
    renamed = tmp_path / "v2_trainer_state.json"
    shutil.copy(DATA / "trl-1.x-fp16-overflow.json", renamed)
    report = check_run_dir(renamed)
    assert report.source == "trl" and report.steps == 80 and not report.errors
    assert not any(f.code == "GRPO-A090" for f in report.findings)


def test_a_truncated_state_says_its_path_and_the_byte_where_it_breaks(tmp_path, capsys):
    data = (DATA / "trl-1.x-fp16-overflow.json").read_bytes()
    broken = tmp_path / "run"
    broken.mkdir()
    (broken / "trainer_state.json").write_bytes(data[:5000])
    assert health_command([str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"{broken / 'trainer_state.json'}" in err and "no trainer_state.json" not in err
    assert f"breaks at byte {breaks(data[:5000])} of 5000" in err and "truncated" in err
    (tmp_path / "alone.json").write_bytes(data[:5000])
    report = check_run_dir(tmp_path / "alone.json")
    assert report.errors and f"byte {breaks(data[:5000])} of 5000" in report.errors[0]


def test_a_fallback_to_an_older_checkpoint_is_stated(tmp_path):
    full = state("trl-1.x-fp16-overflow")
    older = {**full, "global_step": 40, "log_history": full["log_history"][:40]}
    run = tmp_path / "run"
    (run / "checkpoint-40").mkdir(parents=True)
    (run / "checkpoint-80").mkdir()
    (run / "checkpoint-40" / "trainer_state.json").write_text(json.dumps(older))
    (run / "checkpoint-80" / "trainer_state.json").write_bytes(json.dumps(full).encode()[:7000])
    report = check_run_dir(run)
    assert report.steps == 40 and report.metrics_file.endswith("checkpoint-40/trainer_state.json")
    cut = json.dumps(full).encode()[:7000]
    assert any(
        "checkpoint-80" in note and f"byte {breaks(cut)} of 7000" in note and "checkpoint-40" in note
        for note in report.notes
    ), report.notes
