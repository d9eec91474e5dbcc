"""grpo_schema.engine.policy: each refusal of a posted config, its diagnostic, and the operator switch that lifts it."""

from __future__ import annotations

import pytest

from grpo_schema import check_mapping, check_text
from grpo_schema.engine.codes import CODES
from grpo_schema.engine.policy import ServicePolicy, output_dir_busy, service_policy
from grpo_schema.engine.policy_paths import missing_local_paths, resolve_under

BASE = "model_name_or_path: m\ndataset_name: d\n"  # line 3 onwards: the reward, then the text under test


def refusals(text: str, policy: ServicePolicy, profiles=(), world_size=None) -> list[dict]:
    reward = "" if text.startswith("reward_funcs") else "reward_funcs: [accuracy_reward]\n"
    result = check_text(BASE + reward + text, world_size=world_size)
    return [d.to_dict() for d in service_policy(result, policy, profiles)]


@pytest.fixture
def policy(tmp_path) -> ServicePolicy:
    (tmp_path / "runs").mkdir()
    return ServicePolicy(
        runs_dir=tmp_path / "runs",
        reward_imports=frozenset({"grpo_runtime.data.reward_library.x"}),
        env_allowlist=frozenset({"OMP_NUM_THREADS"}),
    )


def only(found: list[dict], code: str) -> dict:
    assert [d["code"] for d in found] == [code], found
    diag = found[0]
    assert diag["severity"] == "error" and diag["message"] and diag["hint"], diag
    assert CODES[code].title and CODES[code].explanation
    return diag


def test_a_plain_config_passes(policy):
    assert refusals("output_dir: exp/one\nenv:\n  OMP_NUM_THREADS: '1'\n", policy) == []


def test_dotted_reward_is_refused_unless_allowed(policy):
    diag = only(refusals("reward_funcs: [my_pkg.rewards.cheat]\n", policy), "GRPO-X001")
    assert diag["fields"] == ["reward_funcs"] and diag["line"] == 3 and "my_pkg.rewards.cheat" in diag["message"]
    assert refusals("reward_funcs: [grpo_runtime.data.reward_library.x]\n", policy) == []  # allowed by name
    assert (
        refusals("reward_funcs: [my_pkg.rewards.cheat]\n", ServicePolicy(policy.runs_dir, allow_reward_imports=True))
        == []
    )


def test_env_outside_the_allow_list_is_refused(policy):
    diag = only(refusals("env:\n  WANDB_PROJECT: x\n  OMP_NUM_THREADS: '2'\n", policy), "GRPO-X002")
    assert diag["fields"] == ["env.WANDB_PROJECT"] and diag["line"] == 5 and "OMP_NUM_THREADS" in diag["hint"]
    assert diag["fix"]["unset"] == ["env.WANDB_PROJECT"]
    # a variable the validator already refuses (E003) is not reported twice
    assert refusals("env:\n  LD_PRELOAD: /tmp/x.so\n", policy) == []
    assert "GRPO-E003" in {d.code for d in check_text(BASE + "env:\n  LD_PRELOAD: /tmp/x.so\n").diagnostics}


@pytest.mark.parametrize(
    "text,field",
    [
        ("trust_remote_code: true\n", "trust_remote_code"),
        ("model_init_kwargs: {trust_remote_code: true}\n", "model_init_kwargs"),
        ("model_init_kwargs: '{\"trust_remote_code\": true}'\n", "model_init_kwargs"),
    ],
)
def test_trust_remote_code_is_refused_unless_allowed(policy, text, field):
    diag = only(refusals(text, policy), "GRPO-X003")
    assert diag["fields"] == [field] and diag["line"] == 4
    assert refusals(text, ServicePolicy(policy.runs_dir, allow_trust_remote_code=True)) == []


@pytest.mark.parametrize("value", ["/tmp/elsewhere", "../escape", "exp/../../escape", "~/home-run", ".", "exp/.."])
def test_output_dir_outside_the_runs_directory_is_refused(policy, value):
    diag = only(refusals(f"output_dir: '{value}'\n", policy), "GRPO-X004")
    assert diag["fields"] == ["output_dir"] and diag["line"] == 4 and value in diag["message"]
    assert diag["fix"]["unset"] == ["output_dir"]


def test_a_symlink_out_of_the_runs_directory_is_refused(policy, tmp_path):
    (tmp_path / "outside").mkdir()
    (policy.runs_dir / "link").symlink_to(tmp_path / "outside")
    only(refusals("output_dir: link/exp\n", policy), "GRPO-X004")
    (policy.runs_dir / "inside").symlink_to(policy.runs_dir / "real", target_is_directory=True)
    assert refusals("output_dir: inside/exp\n", policy) == []  # a symlink that stays inside is fine


def test_the_operator_can_allow_paths_anywhere(policy, tmp_path):
    anywhere = ServicePolicy(policy.runs_dir, allow_outside_runs_dir=True)
    assert refusals("output_dir: /tmp/elsewhere\n", anywhere) == []
    assert resolve_under(policy.runs_dir, "../x", allow_outside=True) == (tmp_path / "x").resolve()


def test_resume_from_a_checkpoint_outside_is_refused(policy):
    diag = only(refusals("resume_from_checkpoint: /data/other/checkpoint-5\n", policy), "GRPO-X004")
    assert diag["fields"] == ["resume_from_checkpoint"]
    assert refusals("resume_from_checkpoint: true\n", policy) == []
    assert refusals("resume_from_checkpoint: exp/checkpoint-5\n", policy) == []


def test_profiles_are_refused_for_runs(policy):
    found = refusals("", policy, profiles=["my_pkg.profile:PROFILE", "open-r1"])
    assert [d["code"] for d in found] == ["GRPO-X005", "GRPO-X005"]
    assert "module path" in found[0]["message"] and found[0]["line"] is None


def test_more_processes_than_allowed_is_refused(policy):
    diag = only(refusals("num_processes: 2\n", policy), "GRPO-X006")
    assert diag["fields"] == ["num_processes"] and diag["line"] == 4
    assert refusals("", ServicePolicy(policy.runs_dir, max_processes=4), world_size=4) == []
    assert only(refusals("", policy, world_size=3), "GRPO-X006")["fields"] == []


def test_a_json_body_gets_the_same_refusals_without_positions(policy):
    result = check_mapping(
        {
            "model_name_or_path": "m",
            "dataset_name": "d",
            "reward_funcs": ["a.b"],
            "output_dir": "/abs",
            "trust_remote_code": True,
        }
    )
    found = [d.to_dict() for d in service_policy(result, policy)]
    assert [d["code"] for d in found] == ["GRPO-X001", "GRPO-X003", "GRPO-X004"]
    assert all(d["line"] is None for d in found)


def test_busy_output_dir_is_a_diagnostic(policy):
    result = check_text(BASE + "output_dir: exp\n")
    diag = output_dir_busy(result, "abc", policy.runs_dir / "exp").to_dict()
    assert diag["code"] == "GRPO-X007" and diag["line"] == 3 and "abc" in diag["message"]


@pytest.mark.parametrize("text", [f"output_dir: /{'a' * 200_000}\n", f"reward_funcs: [pkg.{'b' * 200_000}]\n"])
def test_refusals_quoting_a_huge_value_are_bounded_like_the_validators(policy, text):
    """Found reviewing the change: the policy's messages quoted the refused value whole (a 200 kB message)."""
    found = refusals(text, policy)
    assert found and all(len(d["message"]) <= 2000 and len(d["hint"]) <= 2000 for d in found)
    assert all(d["line"] is not None for d in found)  # placed at the key, as before


@pytest.mark.parametrize(
    "value, target",
    [
        ("null", None),
        ("false", None),
        ("''", None),
        ("true", "LATEST"),
        ("latest", "latest"),
        ("ckpt/checkpoint-5", "ckpt/checkpoint-5"),
    ],
)
def test_one_reading_of_resume_from_checkpoint_for_policy_api_and_trainer(policy, value, target):
    """Found reviewing the change: the policy read 'FALSE' as "no resume", the runs API as a folder to resume
    from, and the trainer as a folder too. grpo_schema.engine.resume.resume_target is now the one reading."""
    from grpo_schema.engine.resume import LATEST, resume_target

    result = check_text(BASE + "reward_funcs: [accuracy_reward]\n" + f"resume_from_checkpoint: {value}\n")
    got = resume_target(result.config.resume_from_checkpoint)
    assert got is LATEST if target == "LATEST" else got == target
    assert refusals(f"resume_from_checkpoint: {value}\n", policy) == []
    assert only(refusals("resume_from_checkpoint: /elsewhere/checkpoint-5\n", policy), "GRPO-X004")


@pytest.mark.parametrize("value", ["'True'", "'FALSE'", '"yes"'])
def test_a_quoted_boolean_resume_is_refused_before_any_reading(value):
    """A quoted boolean is a folder name to TRL (a directory called 'True'), so the validator refuses it (GRPO-T010)
    and neither the policy nor the trainer ever reads it."""
    result = check_text(BASE + "reward_funcs: [accuracy_reward]\n" + f"resume_from_checkpoint: {value}\n")
    assert not result.valid and "GRPO-T010" in [d.code for d in result.diagnostics]


def test_push_to_hub_is_refused_unless_the_operator_allows_it(policy):
    diag = only(refusals("push_to_hub: true\nhub_model_id: me/model\n", policy), "GRPO-X009")
    assert diag["fields"] == ["push_to_hub"] and diag["line"] == 4 and "Hub token" in diag["message"]
    assert refusals("push_to_hub: true\n", ServicePolicy(policy.runs_dir, allow_push_to_hub=True)) == []


def missing(text: str, base, resolved=None) -> list[dict]:
    return [d.to_dict() for d in missing_local_paths(check_text(text), base, resolved or {})]


def test_a_local_model_or_dataset_path_that_names_nothing_is_refused_with_how_to_make_it(tmp_path):
    demo = "model_name_or_path: demo/model\ndataset_name: demo/data\nreward_funcs: [accuracy_reward]\n"
    found = missing(demo, tmp_path)
    assert [(d["code"], d["fields"], d["line"]) for d in found] == [
        ("GRPO-X010", ["model_name_or_path"], 1),
        ("GRPO-X010", ["dataset_name"], 2),
    ]
    assert "'demo/model'" in found[0]["message"] and str(tmp_path) in found[0]["message"]
    assert "grpo demo demo" in found[0]["hint"] and CODES["GRPO-X010"].explanation
    (tmp_path / "demo" / "model").mkdir(parents=True)
    assert [d["fields"] for d in missing(demo, tmp_path)] == [["dataset_name"]]
    # ./ and absolute paths are local too; a Hub name (org/name) is never looked for on disk
    other = f"model_name_or_path: ./nowhere\ndataset_name: {tmp_path}/none\nreward_funcs: [accuracy_reward]\n"
    found = missing(other, tmp_path, {"model_name_or_path": str(tmp_path / "nowhere")})
    assert [d["fields"] for d in found] == [["model_name_or_path"], ["dataset_name"]]
    assert "grpo demo demo" not in found[0]["hint"] and "Hub name" in found[0]["hint"]
    assert (
        missing(
            "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/tldr\nreward_funcs: [accuracy_reward]\n",
            tmp_path,
        )
        == []
    )
