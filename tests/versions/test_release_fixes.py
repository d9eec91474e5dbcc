"""The fix search knows the judged release: it proposes only knobs the release reads, checks each edit as that
release reads the file, asks for a different world size on the launcher's command line where the release does not
take num_processes from the file, and renames a 1.16 key back to the name the release reads instead of removing it."""

from __future__ import annotations

import pytest

from grpo_schema.engine.validate import check_text

RECIPE = (
    "model_name_or_path: m\ndataset_name: d\nreward_funcs: [think_format_reward]\n"
    "per_device_train_batch_size: 2\nnum_generations: 8\n"
)


def b001(release: str, text: str = RECIPE, world_size: int | None = 3):
    result = check_text(text, path="r.yaml", trl_version=release, world_size=world_size)
    return next(d for d in result.diagnostics if d.code == "GRPO-B001")


def edited_keys(diag) -> set[str]:
    return {k for fix in (diag.fix, *diag.alternatives) if fix is not None for k in fix.set}


def test_no_steps_per_generation_before_it_existed():
    for release in ("0.15", "0.16", "0.17"):
        assert "steps_per_generation" not in edited_keys(b001(release)), release
    assert "steps_per_generation" in edited_keys(b001("0.19"))


def test_accumulation_is_no_fix_where_the_release_checks_the_micro_batch():
    assert "gradient_accumulation_steps" not in edited_keys(b001("0.16"))
    assert "gradient_accumulation_steps" in edited_keys(b001("0.17"))


def test_no_num_processes_in_the_file_where_the_release_does_not_take_it():
    text = RECIPE + "num_processes: 3\n"
    for release in ("0.19", "0.22", "0.28"):
        diag = b001(release, text, world_size=None)
        assert "num_processes" not in edited_keys(diag), release
        assert "accelerate launch --num_processes 4" in diag.hint
    assert "num_processes" in edited_keys(b001("0.29", text, world_size=None))


def test_a_1_16_key_is_renamed_back_for_0_19():
    text = RECIPE + "dtype: bfloat16\nactivation_checkpointing: true\n"
    result = check_text(text, path="r.yaml", trl_version="0.19")
    fixes = {d.fields[0]: d.fix for d in result.diagnostics if d.code == "GRPO-K009"}
    assert fixes["dtype"].rename == {"dtype": "torch_dtype"} and not fixes["dtype"].unset
    assert fixes["activation_checkpointing"].rename == {"activation_checkpointing": "gradient_checkpointing"}


def test_reward_completion_offers_the_release_s_own_names():
    pytest.importorskip(
        "lsprotocol", reason="the language server's completion needs the lsp extra (pip install -e '.[lsp]')"
    )
    from grpo_schema.engine.release import release_surface
    from grpo_schema.lsp.info import completions

    def offered(release):
        return [c.label for c in completions("reward_funcs:\n  - ", 1, 4, (), release_surface(release))]

    assert offered("0.16") == [] and offered("0.19") == ["think_format_reward"]
    assert "reasoning_accuracy_reward" not in offered("0.24") and "accuracy_reward" in offered("0.24")
    assert "reasoning_accuracy_reward" in offered("1.16")
