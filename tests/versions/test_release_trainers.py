"""Oracle, trainer side: each release's own GRPOConfig and GRPOTrainer (one CPU step on a tiny random-init model, in
that release's .venv-trl interpreter) on every value of every choice field grpo knows, against `grpo validate
--trl-version R`: grpo refuses a value exactly when the release's trainer does (marker `trl_release`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from grpo_schema import check_file
from grpo_schema.versions import surface
from tests.support.release_envs import BUILT_BY_TEST_SH, interpreter, missing

CHILD = Path(__file__).with_name("trainer_choice_child.py")
SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "grpo-config.schema.json"
FIELDS = ("loss_type", "importance_sampling_level", "scale_rewards", "multi_objective_aggregation")
# what a value needs from another field to be run at all (the release refuses luspo with token-level ratios)
NEEDS = {("loss_type", "luspo"): {"importance_sampling_level": "sequence"}}
BASE = {
    "per_device_train_batch_size": 2,
    "num_generations": 2,
    "max_completion_length": 3,
    "max_steps": 1,
    "logging_steps": 1,
    "save_strategy": "no",
    "bf16": False,
    "gradient_checkpointing": False,
}

pytestmark = [pytest.mark.trl_release, pytest.mark.slow]


def cases(release: str) -> list[dict]:
    """Every string value of 1.16's choice fields, for the fields this release reads as strings."""
    properties = json.loads(SCHEMA.read_text())["properties"]
    table = surface(release)
    found = []
    for name in FIELDS:
        info = table.fields.get(name)
        if info is None or info.type != "str":
            continue  # absent (the parser oracle covers it) or a boolean the parser converts (scale_rewards < 0.22)
        values = [
            v
            for option in [properties[name], *properties[name].get("anyOf", [])]
            for v in option.get("enum", [])
            if isinstance(v, str)
        ]
        for value in values:
            config = {k: v for k, v in NEEDS.get((name, value), {}).items() if k in table.fields}
            found.append({"field": name, "value": value, "config": config})
    return found


def grpo_refuses(release: str, case: dict, folder: Path) -> bool:
    path = folder / f"{case['field']}-{case['value']}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "model_name_or_path": "tiny",
                "dataset_name": "prompts",
                "reward_funcs": ["r"],
                "use_cpu": True,
                "report_to": "none",
                **BASE,
                **case["config"],
                case["field"]: case["value"],
            }
        )
    )
    result = check_file(path, trl_version=release)
    return any(
        d.code in ("GRPO-T003", "GRPO-T013") and case["field"] in d.fields
        for d in result.diagnostics
        if d.severity == "error"
    )


@pytest.mark.parametrize("release", BUILT_BY_TEST_SH)
def test_grpo_refuses_a_choice_value_exactly_when_the_release_s_trainer_does(release, tmp_path):
    python = interpreter(release)
    if python is None:
        missing(release)
    wanted = cases(release)
    (tmp_path / "cases.json").write_text(json.dumps(wanted))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [str(python), str(CHILD), str(out), str(tmp_path / "cases.json")], capture_output=True, text=True, timeout=300
    )
    if proc.returncode == 3:  # the environment has the release's parser but not all its trainer needs
        why = proc.stderr.strip().splitlines()[-1]
        if os.environ.get("CI") == "true" and os.environ.get("SKIP_TRL_RELEASES") != "1":
            pytest.fail(f"{why}: scripts/trl-release-venvs.sh builds .venv-trl/{release} with what its trainer needs")
        pytest.skip(why)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["release"] == release
    assert len(result["cases"]) == len(wanted)  # every field the table reads as a string, the release's config has
    disagreements = [
        (c["field"], c["value"], c["verdict"])
        for c in result["cases"]
        if c["verdict"].startswith("refuses")
        != grpo_refuses(
            release,
            c | {"config": next(w["config"] for w in wanted if (w["field"], w["value"]) == (c["field"], c["value"]))},
            tmp_path,
        )
    ]
    assert disagreements == []
    if release == "0.19.1":  # the release's own words for what grpo now refuses
        refused = {c["value"] for c in result["cases"] if c["field"] == "loss_type" and c["verdict"] != "accepts"}
        assert refused == {"dapo", "cispo", "sapo", "luspo", "vespo"}
