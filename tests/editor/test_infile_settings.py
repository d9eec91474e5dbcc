"""One engine, one answer: a `# grpo: --world-size N` comment is read by check_text, so `grpo validate`, the
service (and its form) and `grpo lsp` check a file at the same world size, with the same precedence:
command-line flag / query parameter > the comment > num_processes in the file > 1."""

from __future__ import annotations

import json

import pytest

from grpo_schema.engine.infile import read_file_settings
from grpo_schema.engine.validate import check_text
from tests.conftest import REPO
from tests.support.cli import grpo

# 4 x 8 x 1 = 32 completions: whole groups of 8 at world size 8 (and 2, 4), not at 3 nor at 1 with G=6 below.
CONFIG = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\nnum_generations: 6\n"
)
COMMENTED = "# grpo: --world-size 3\n" + CONFIG  # 4 x 3 = 12: whole groups of 6


def validate_json(path, *flags: str) -> dict:
    done = grpo("validate", "--format", "json", str(path), *flags, cwd=REPO)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["files"][0]


def codes(result) -> list[str]:
    return [d["code"] if isinstance(d, dict) else d.code for d in result]


def test_the_comment_is_parsed_in_the_engine():
    found = read_file_settings(
        "# top\n# grpo: --world-size 8 --profile open-r1\nbeta: 0\n  # grpo: --allow-env A\n"
        "x: 1  # grpo: --world-size 2\n# grpo: --bogus\n"
    )
    assert (found.world_size, found.world_size_line, found.profiles) == (8, 2, ("open-r1",))
    assert found.allow_env == ("A",) and found.lines == (2, 4, 6)  # a comment after a value does not count
    assert [p.line for p in found.problems] == [6]


def test_validate_reads_the_comment_and_the_flag_wins(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(COMMENTED)
    result = validate_json(path)
    assert (result["world_size"], result["world_size_source"]) == (3, "comment") and result["valid"]
    assert result["derived"]["inputs"]["world_size"] == {"value": 3, "source": "comment"}
    flagged = validate_json(path, "--world-size", "1")
    assert (flagged["world_size"], flagged["world_size_source"]) == (1, "command line")
    assert "GRPO-B001" in codes(flagged["diagnostics"])
    plain = tmp_path / "p.yaml"
    plain.write_text(CONFIG)
    assert (validate_json(plain)["world_size"], validate_json(plain)["world_size_source"]) == (1, "default")


def test_the_comment_wins_over_num_processes():
    result = check_text(COMMENTED + "num_processes: 1\n")
    assert result.world_size == 3 and result.sources["world_size"] == "comment" and result.valid
    assert check_text(CONFIG + "num_processes: 3\n").sources["world_size"] == "file"


def test_a_bad_comment_is_a_warning_on_its_line_and_a_comment_profile_is_used():
    result = check_text("# grpo: --world-size eight\n" + CONFIG)
    bad = next(d for d in result.diagnostics if d.code == "GRPO-Y015")
    assert bad.line == 1 and bad.severity == "warning" and result.world_size == 1
    unknown = check_text("# grpo: --profile nope\n" + CONFIG)
    assert [d.line for d in unknown.diagnostics if d.code == "GRPO-Y015"] == [1]
    r1 = check_text("# grpo: --profile open-r1\n" + CONFIG.replace("accuracy_reward", "accuracy"))
    assert "GRPO-R002" not in codes(r1.diagnostics)  # open-r1's reward name


def test_fixes_keep_the_comment_world_size():
    result = check_text("# grpo: --world-size 8\n" + CONFIG)  # 32 completions, G=6: B001 at 8
    b001 = next(d for d in result.diagnostics if d.code == "GRPO-B001")
    assert "world size (8)" in b001.message
    assert all("num_processes" not in (f.set or {}) for f in [b001.fix, *b001.alternatives] if f)


def test_the_service_reads_the_comment_and_the_query_wins():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    with TestClient(create_app(Settings())) as client:
        headers = {"content-type": "application/yaml"}
        body = client.post("/api/v1/validate", content=COMMENTED, headers=headers).json()
        assert (body["world_size"], body["world_size_source"], body["valid"]) == (3, "comment", True)
        body = client.post("/api/v1/validate?world_size=1", content=COMMENTED, headers=headers).json()
        assert (body["world_size"], body["world_size_source"], body["valid"]) == (1, "command line", False)
        explained = client.post("/api/v1/explain", content=COMMENTED, headers=headers).json()
        assert explained["world_size"] == 3  # what the form shows
