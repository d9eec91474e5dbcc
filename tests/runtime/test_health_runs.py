"""Run health on real grpo_runtime runs: seeded pathological runs of the demo task, each found by its code while
the run trains (the live lines on stderr) and afterwards by `grpo health` on the run's directory; the healthy
demo gives no finding."""

import json

import pytest

from grpo_runtime.launch.cli import demo_command, train_command
from grpo_schema.commands.health import health_command

pytestmark = pytest.mark.slow
REWARDS = "tests.runtime.health_rewards."


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("health") / "demo"
    assert demo_command([str(root)]) == 0
    return root


def train(demo, name, capsys, *overrides, max_steps=4, extra=()):
    out = demo.parent / name
    args = [
        str(demo / "config.yaml"),
        "--set",
        f"output_dir={out}",
        "--set",
        f"max_steps={max_steps}",
        "--set",
        "disable_tqdm=true",
        "--set",
        "save_steps=1000",
    ]
    for item in overrides:
        args += ["--set", item]
    code = train_command(args + list(extra))
    err = capsys.readouterr().err
    return code, out, err


def live_codes(err: str) -> set[str]:
    return {line.split()[2] for line in err.splitlines() if line.startswith("grpo health: GRPO-")}


def standing(err: str) -> set[str]:
    """The codes the live lines leave standing: each one printed, less those printed as cleared after it."""
    codes: set[str] = set()
    for line in err.splitlines():
        if line.startswith("grpo health: GRPO-"):
            code = line.split()[2]
            (codes.discard if line.split()[3] == "cleared" else codes.add)(code)
    return codes


def health(out, capsys, *args):
    before = sorted((str(p), p.stat().st_mtime_ns) for p in out.rglob("*"))
    code = health_command([str(out), "--format", "json", *args])
    report = json.loads(capsys.readouterr().out)["runs"][0]
    assert sorted((str(p), p.stat().st_mtime_ns) for p in out.rglob("*")) == before  # nothing written there
    return code, report, {f["code"] for f in report["findings"]}


def test_the_healthy_demo_gives_no_finding(demo, capsys):
    code, out, err = train(demo, "healthy", capsys, max_steps=60)
    assert code == 0 and live_codes(err) <= {"GRPO-A006"}, err[-2000:]
    status, report, codes = health(out, capsys)
    assert status == 0 and report["healthy"] and report["verdict"] == "healthy", report["findings"]
    # its six tokens are the canvas: cut completions that earn more and more are information, never a warning
    assert all(f["severity"] == "info" for f in report["findings"]) and codes <= {"GRPO-A006"}, report["findings"]
    rewards = [json.loads(line)["reward"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert sum(rewards[-10:]) / 10 > sum(rewards[:10]) / 10 + 0.4  # and it learns


def test_a_constant_reward_is_found_by_code(demo, capsys):
    code, out, err = train(demo, "constant", capsys, f"reward_funcs=[{REWARDS}constant_reward]")
    assert code == 0
    assert {"GRPO-A001", "GRPO-A009", "GRPO-A007"} <= live_codes(err), err[-2000:]
    status, report, codes = health(out, capsys)
    assert status == 0 and not report["healthy"]  # warnings: exit 0 unless --strict
    assert {"GRPO-A001", "GRPO-A009", "GRPO-A007"} <= codes and standing(err) == codes  # live = batch
    a001 = next(f for f in report["findings"] if f["code"] == "GRPO-A001")
    assert a001["steps"] == [1, 4] and a001["values"] == [1.0] * 4 and a001["metric"] == "frac_reward_zero_std"
    assert a001["fix"]["set"] == {"num_generations": 16} and a001["line"] == 1
    a009 = next(f for f in report["findings"] if f["code"] == "GRPO-A009")
    assert "constant_reward" in a009["message"]
    assert health_command([str(out), "--strict"]) == 1


def test_a_reward_returning_none_and_nan_is_named_with_its_rate(demo, capsys):
    code, out, err = train(demo, "patchy", capsys, f"reward_funcs=[{REWARDS}patchy_reward]", max_steps=3)
    assert code == 0 and {"GRPO-A002", "GRPO-A003"} <= live_codes(err), err[-2000:]
    _, report, codes = health(out, capsys)
    none = next(f for f in report["findings"] if f["code"] == "GRPO-A002")
    nan = next(f for f in report["findings"] if f["code"] == "GRPO-A003")
    # 32 completions a step: indexes 3, 7, ... (8) are None; 4, 9, 14, 24, 29 (5: 19 is also 3 mod 4) are NaN
    assert "patchy_reward" in none["message"] and none["values"] == [0.25], none
    assert "patchy_reward" in nan["message"] and nan["values"] == [pytest.approx(5 / 32, abs=1e-6)], nan
    assert "returned None for 25% of completions" in none["message"]


def test_completions_cut_at_a_tiny_limit_are_found(demo, capsys):
    # min_new_tokens at the limit: no completion can end, as when the limit is far below what the task needs
    code, out, err = train(
        demo,
        "clipped",
        capsys,
        "max_completion_length=2",
        "generation_kwargs={min_new_tokens: 3}",
        f"reward_funcs=[{REWARDS}noise_reward]",
    )
    assert code == 0 and "GRPO-A006" in live_codes(err), err[-2000:]
    _, report, codes = health(out, capsys)
    a006 = next(f for f in report["findings"] if f["code"] == "GRPO-A006")
    assert a006["fix"]["set"] == {"max_completion_length": 4} and "(2)" in a006["message"]
    assert "GRPO-A001" not in codes  # the rewards vary: it is the cut, not the signal


def test_every_completion_at_a_2_token_cap_gets_the_clipping_finding(demo, capsys):
    # the demo's own reward, and no completion can end (min_new_tokens past the cap)
    code, out, err = train(
        demo, "capped", capsys, "max_completion_length=2", "generation_kwargs={min_new_tokens: 3}", max_steps=6
    )
    assert code == 0 and "GRPO-A006" in live_codes(err), err[-2000:]
    _, report, codes = health(out, capsys)
    a006 = next(f for f in report["findings"] if f["code"] == "GRPO-A006")
    # the cut on every logged step is never hidden: a warning, or information when the cut completions earn more
    assert "(2)" in a006["message"] and a006["extent"]["logged_steps"] == a006["extent"]["of"] == 6
    assert a006["severity"] in ("warning", "info") and "cut at 2" in a006["fix"]["title"]
    assert a006["fix"]["set"] == {"max_completion_length": 4}


def test_a_learning_rate_that_gives_nan_is_fatal_and_can_stop_the_run(demo, capsys):
    # two optimizer steps per generation: the second trains on the diverged weights before they generate
    code, out, err = train(
        demo,
        "nan",
        capsys,
        "learning_rate=1e12",
        "max_grad_norm=0",
        "steps_per_generation=2",
        "per_device_train_batch_size=16",
        max_steps=8,
        extra=["--stop-on-fatal"],
    )
    assert code == 0 and "GRPO-A005" in live_codes(err), err[-2000:]
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert max(steps) < 8, steps  # stopped on the finding rather than training on NaN weights
    assert "stopped after step" in err
    status, report, codes = health(out, capsys)
    assert status == 1 and "GRPO-A005" in codes
    a005 = next(f for f in report["findings"] if f["code"] == "GRPO-A005")
    assert a005["severity"] == "error" and a005["fatal"] and a005["fix"]["set"] == {"learning_rate": 1e11}


def test_a_resume_that_trains_no_step_is_an_error(demo, capsys):
    code, out, _ = train(demo, "resumed", capsys, "save_steps=2", max_steps=2)
    assert code == 0 and (out / "checkpoint-2").is_dir()
    code, _, err = train(demo, "resumed", capsys, "save_steps=2", "resume_from_checkpoint=true", max_steps=2)
    assert code == 0 and "GRPO-A014" in live_codes(err), err[-2000:]
    status, report, codes = health(out, capsys)
    assert status == 1 and codes == {"GRPO-A014"}
    assert report["findings"][0]["fix"]["set"] == {"max_steps": 4}


def test_weights_that_diverge_before_generating_end_the_run_with_the_finding(demo, capsys):
    code, out, err = train(demo, "diverged", capsys, "learning_rate=1e12", "max_grad_norm=0", max_steps=4)
    assert code == 4 and "GRPO-A005" in live_codes(err) and "Traceback" not in err, err[-2000:]
    assert "weights diverged (GRPO-A005)" in err
    status, report, codes = health(out, capsys)
    assert status == 1 and "GRPO-A005" in codes
