"""`grpo validate --format sarif`: valid SARIF 2.1.0 (the OASIS schema, committed under data/), one rule per code
of the catalogue, and one result per diagnostic at the key's line and column with the diagnostic's level."""

from __future__ import annotations

import json

import jsonschema
import pytest

from grpo_schema import check_text
from grpo_schema.render.sarif import artifact_uri, code_catalogue, render_sarif
from tests.conftest import EXAMPLES, FIXTURES
from tests.editor.conftest import DATA
from tests.support.cli import grpo

SARIF_SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CONFIG = """model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
num_generation: 8
fp16: true
bf16: true
use_liger_kernel: true
num_processes: 2
"""


def sarif_of(*results) -> dict:
    log = json.loads(render_sarif(list(results)))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    return log


def test_output_is_valid_sarif_with_the_whole_code_catalogue():
    log = sarif_of(check_text(CONFIG, path="configs/run.grpo.yaml"))
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(code_catalogue())
    assert all(rule["shortDescription"]["text"] and rule["fullDescription"]["text"] for rule in rules)
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in rules}
    assert levels["GRPO-P001"] == "error" and levels["GRPO-D003"] == "warning" and levels["GRPO-K005"] == "note"


def test_each_diagnostic_is_a_result_at_its_line_and_level():
    result = check_text(CONFIG, path="configs/run.grpo.yaml")
    (run,) = sarif_of(result)["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(result.diagnostics)
    for diag, item in zip(result.diagnostics, run["results"]):
        region = item["locations"][0]["physicalLocation"]["region"]
        assert (item["ruleId"], region["startLine"], region["startColumn"]) == (diag.code, diag.line, diag.column)
        assert item["level"] == {"error": "error", "warning": "warning", "info": "note"}[diag.severity]
        assert rules[item["ruleIndex"]]["id"] == diag.code
        assert item["message"]["text"].startswith(diag.message)
    by_code = {item["ruleId"]: item for item in run["results"]}
    assert by_code["GRPO-K001"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert by_code["GRPO-P001"]["level"] == "error" and by_code["GRPO-D003"]["level"] == "warning"
    assert by_code["GRPO-K005"]["level"] == "note"
    location = by_code["GRPO-K001"]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "configs/run.grpo.yaml", "uriBaseId": "%SRCROOT%"}


def test_a_diagnostic_without_a_position_points_at_line_1():
    (run,) = sarif_of(check_text("", path="empty.yaml"))["runs"]
    (item,) = run["results"]
    assert item["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 1}


def test_uris():
    assert artifact_uri("./configs/my run.yaml") == ("configs/my%20run.yaml", "%SRCROOT%")
    assert artifact_uri("/abs/x.yaml") == ("file:///abs/x.yaml", None)
    assert artifact_uri("<stdin>") == ("stdin", None)


def test_cli_prints_sarif_for_several_files_and_keeps_the_exit_status():
    files = [FIXTURES / "invalid" / "fp16-and-bf16.yaml", EXAMPLES / "grpo-no-kl.yaml"]
    out = grpo("validate", "--format", "sarif", *map(str, files))
    assert out.returncode == 1
    log = json.loads(out.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert files[0].as_uri() in uris


@pytest.mark.parametrize("broken", [{"version": "2.0.0"}, {"runs": [{"results": []}]}])
def test_the_committed_sarif_schema_is_the_real_one(broken):
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]}
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate({**log, **broken})
