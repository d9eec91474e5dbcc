"""What a file is, as every surface decides it (grpo_schema.engine.recognise): the files of an open-r1 style
training repository (tests/fixtures/recognise), recognised by their content, and what `grpo validate` then says:
one GRPO-Y016 note for a file of another kind, the full check for a GRPO config however many other keys it has."""

from __future__ import annotations

import json

import pytest

from grpo_schema.engine.check import check_mapping
from grpo_schema.engine.infile import comment_lines, read_file_settings
from grpo_schema.engine.recognise import GRPO, recognise
from grpo_schema.engine.validate import check_text
from tests.conftest import REPO
from tests.support.cli import grpo
from tests.support.configs import ACCELERATE, DDP, DEEPSPEED, FORK, GRPO_RECIPE, SFT, WORKFLOW
from tests.support.configs import RECOGNISE as FOLDER


def validate(*paths) -> tuple[int, dict[str, dict]]:
    done = grpo("validate", "--format", "json", *map(str, paths), cwd=REPO)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, {f["path"]: f for f in json.loads(done.stdout)["files"]}


def codes(diagnostics) -> list[str]:
    return [d["code"] if isinstance(d, dict) else d.code for d in diagnostics]


@pytest.mark.parametrize(
    "path,kind",
    [
        (ACCELERATE, "an accelerate config"),
        (DDP, "an accelerate config"),
        (SFT, "an SFT config"),
        (DEEPSPEED, "a DeepSpeed config"),
        (WORKFLOW, "a GitHub Actions workflow"),
        (GRPO_RECIPE, GRPO),
        (FORK, GRPO),
    ],
)
def test_each_file_of_a_training_repository_is_recognised_for_what_it_is(path, kind):
    assert recognise(path.read_text()).kind == kind


def test_a_grpo_comment_counts_only_as_a_top_level_comment_line():
    script = WORKFLOW.read_text()
    assert "# grpo: --world-size 4" in script  # inside the step's `run: |` script: text, not a comment
    assert list(comment_lines(script)) == [] and read_file_settings(script).world_size is None
    nested = "jobs:\n  a:\n    # grpo: --world-size 2\n    runs-on: x\n"
    assert read_file_settings(nested).world_size is None  # a comment under a nested key is that key's
    top = "beta: 0\n  # grpo: --world-size 2\nnote: >-\n  # grpo: --world-size 5\n# grpo: --profile open-r1\n"
    found = read_file_settings(top)
    assert (found.world_size, found.profiles, found.lines) == (2, ("open-r1",), (2, 5))


def test_a_grpo_comment_or_a_grpo_key_outranks_another_kinds_keys():
    accelerate = ACCELERATE.read_text()
    assert recognise("# grpo: --world-size 8\n" + accelerate).kind == GRPO
    assert recognise(accelerate + "num_generations: 8\n").kind == GRPO  # a config that carries launch settings
    assert recognise("name: x\nfoo: 1\n").kind is None  # nothing says either way


def test_validate_gives_each_other_kind_one_note_and_checks_every_grpo_config():
    status, files = validate(FOLDER, WORKFLOW)  # the folder (WORKFLOW's .github is hidden from nothing: named too)
    for path in (ACCELERATE, DDP, SFT, DEEPSPEED, WORKFLOW):
        result = files[str(path)]
        assert codes(result["diagnostics"]) == ["GRPO-Y016"] and result["valid"], path
        note = result["diagnostics"][0]
        assert note["severity"] == "info" and note["line"] and "not a GRPO config" in note["message"]
        assert "`# grpo:`" in note["hint"]
    assert (
        "an accelerate config (compute_environment, deepspeed_config, distributed_type, main_training_function)"
        in files[str(ACCELERATE)]["diagnostics"][0]["message"]
    )
    assert files[str(GRPO_RECIPE)]["diagnostics"] == [] and files[str(GRPO_RECIPE)]["valid"]
    fork = files[str(FORK)]  # eleven of its eighteen keys are the fork's own: still a GRPO config, fully checked
    assert codes(fork["diagnostics"]).count("GRPO-K001") == 11 and "GRPO-B001" in codes(fork["diagnostics"])
    assert status == 1  # the fork's errors, and only those


def test_every_surface_of_the_engine_skips_the_same_files():
    assert codes(check_text(SFT.read_bytes()).diagnostics) == ["GRPO-Y016"]
    assert codes(check_mapping(json.loads(DEEPSPEED.read_text())).diagnostics) == ["GRPO-Y016"]  # a JSON body
    forced = check_text("# grpo:\n" + SFT.read_text())  # the way to check it anyway, as the note's hint says
    assert "GRPO-Y016" not in codes(forced.diagnostics) and "GRPO-K001" in codes(forced.diagnostics)
