"""`grpo lsp` over stdio on the files of an open-r1 style training repository (tests/fixtures/recognise): it checks
a file by what the file is, not by the folder it sits in. An accelerate config or an SFT recipe under the default
`**/recipes/**` pattern gets one GRPO-Y016 note and nothing else; a workflow whose step script prints a
`# grpo:` line gets nothing; a GRPO config whose keys are mostly a fork's own gets what `grpo validate` says."""

from __future__ import annotations

from tests.support.configs import ACCELERATE, DDP, FORK, GRPO_RECIPE, SFT, WORKFLOW
from tests.support.lsp import codes, validate

INFORMATION = 3


def test_an_accelerate_config_and_an_sft_recipe_under_recipes_get_one_note(server):
    for path, kind in ((ACCELERATE, "an accelerate config"), (DDP, "an accelerate config"), (SFT, "an SFT config")):
        uri = server.open(path)
        found = server.wait_publish(uri)
        assert codes(found) == ["GRPO-Y016"], (path, codes(found))
        assert found[0]["severity"] == INFORMATION and f"not a GRPO config: {kind}" in found[0]["message"]
        assert codes(found) == codes(validate(path)["diagnostics"])  # what the CLI says of it
        assert server.hover(uri, 0, 2) == "" and server.complete(uri, 1, 0) == []
        assert server.code_actions(uri, (0, 0), (0, 3)) == []


def test_a_grpo_line_inside_a_workflow_step_script_does_not_make_it_a_config(server):
    assert "# grpo: --world-size 4" in WORKFLOW.read_text()
    uri = server.open(WORKFLOW)
    assert server.wait_publish(uri) == [] and server.hover(uri, 0, 2) == ""


def test_a_config_of_mostly_a_forks_keys_gets_what_validate_says(server):
    uri = server.open(FORK)  # not under a file pattern: recognised by reward_funcs, num_generations, beta
    found = server.wait_publish(uri)
    assert codes(found) == codes(validate(FORK)["diagnostics"]) and codes(found).count("GRPO-K001") == 11
    assert "GRPO-B001" in codes(found) and "num_generations" in server.hover(uri, 4, 3)


def test_the_grpo_recipe_beside_them_is_checked(server):
    uri = server.open(GRPO_RECIPE)
    assert server.wait_publish(uri) == [] == validate(GRPO_RECIPE)["diagnostics"]
    assert "Completions sampled per prompt" in server.hover(uri, 10, 3)
