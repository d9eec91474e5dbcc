"""`grpo smoke --trl-version R` (and a file whose `# grpo:` comment names R): the file is judged as R, and run by
grpo_runtime (TRL 1.16's terms) as `grpo migrate --from R` rewrites it, R's defaults written out, the report saying
so. A 0.19-era recipe (open-r1's generation: torch_dtype, max_prompt_length, warmup_ratio, overwrite_output_dir, a
boolean scale_rewards) is valid for 0.19 and not for 1.16."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import textwrap

import pytest

RECIPE_0_19 = """\
# A GRPO recipe pinned to trl==0.19.1, as open-r1's forks wrote them
model_name_or_path: {model}
model_revision: main
torch_dtype: float32
attn_implementation: eager
dataset_name: {data}
reward_funcs:
- my_rewards_019.length
bf16: false
use_cpu: true
do_eval: false
gradient_accumulation_steps: 1
gradient_checkpointing: false
learning_rate: 1.0e-03
log_completions: false
logging_steps: 1
lr_scheduler_type: cosine
max_prompt_length: 64
max_completion_length: 4
max_steps: 10
num_generations: 2
num_train_epochs: 1
output_dir: {out}
overwrite_output_dir: true
per_device_train_batch_size: 8
report_to:
- none
save_strategy: steps
save_steps: 5
scale_rewards: false
seed: 42
warmup_ratio: 0.1
"""


@pytest.fixture(scope="module")
def tiny_model(tiny_model_dir):
    """The run's tiny model (skips, saying why, without torch)."""
    return tiny_model_dir


@pytest.fixture
def recipe(tmp_path, monkeypatch, tiny_model, request):
    (tmp_path / "my_rewards_019.py").write_text(
        textwrap.dedent("""
        def length(completions, **kwargs):
            return [float(len(str(c))) for c in completions]
    """)
    )
    rows = [{"prompt": [{"role": "user", "content": f"say {w}"}]} for w in ("cat", "dog", "star", "sun")]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    request.addfinalizer(lambda: sys.modules.pop("my_rewards_019", None))
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_0_19.format(model=tiny_model, data=tmp_path / "data.jsonl", out=tmp_path / "out"))
    return path


def smoke(*argv) -> tuple[int, dict]:
    from grpo_runtime.smoke.command import smoke_command

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = smoke_command([*map(str, argv), "--format", "json"])
    return code, json.loads(out.getvalue())


def test_the_recipe_is_valid_for_0_19_and_not_for_1_16(recipe):
    from grpo_schema import check_file

    assert check_file(recipe, trl_version="0.19").valid
    as_116 = check_file(recipe, trl_version="1.16")
    assert not as_116.valid and {"GRPO-K002", "GRPO-K003"} <= {d.code for d in as_116.diagnostics}


def test_the_file_runs_translated_with_0_19_defaults_written_out(recipe):
    from grpo_runtime.smoke.command import parser
    from grpo_runtime.smoke.rewrite import translate_for_runtime
    from grpo_schema import check_file

    args = parser().parse_args([str(recipe), "--trl-version", "0.19"])
    translated = translate_for_runtime(args, {"trl_version": "0.19", "trl_version_source": "flag"})
    try:
        copy = check_file(translated["file"])  # as the runtime's 1.16 reads it
        assert copy.valid, [d.message for d in copy.diagnostics if d.severity == "error"]
        assert (copy.config.loss_type, copy.config.dtype, copy.config.scale_rewards) == ("bnpo", "float32", "none")
        assert copy.config.warmup_steps == 0.1 and copy.config.optim == "adamw_torch"
        # the same run as 0.19 reads the original file
        original = check_file(recipe, trl_version="0.19")
        for key in (
            "loss_type",
            "beta",
            "temperature",
            "max_completion_length",
            "optim",
            "scale_rewards",
            "top_k",
            "dtype",
            "warmup_steps",
        ):
            assert getattr(copy.config, key) == getattr(original.config, key), key
        assert "vllm_mode" not in copy.raw  # 0.19's server default is not written for a file without vLLM
        # 1.16's name for it, which the runtime reads before the deprecated one
        assert copy.config.activation_checkpointing is False and original.config.gradient_checkpointing is False
    finally:
        from pathlib import Path

        Path(translated["file"]).unlink()
    [release, lost] = translated["groups"]
    assert release["status"] == "substituted" and "loss_type: bnpo" in release["detail"]
    assert "rename torch_dtype to dtype" in release["detail"]
    assert lost["status"] == "not_exercised" and "max_prompt_length" in lost["detail"]


def test_a_1_16_file_is_not_translated(recipe):
    from grpo_runtime.smoke.command import parser
    from grpo_runtime.smoke.rewrite import translate_for_runtime

    args = parser().parse_args([str(recipe)])
    assert translate_for_runtime(args, {"trl_version": "1.16.0", "trl_version_source": "installed"}) is None


def test_smoke_with_trl_version_0_19_passes_and_says_what_it_ran(recipe):
    # --world-size is 0.19's check's world size, never a num_processes key (0.19's `trl grpo` stops on it)
    code, report = smoke(recipe, "--trl-version", "0.19", "--world-size", "1")
    assert code == 0 and report["passed"] and report["world_size"] == 1, report
    assert (report["trl_version"], report["trl_version_source"], report["file"]) == ("0.19", "flag", str(recipe))
    groups = {g["group"]: g for g in report["groups"]}
    assert groups["TRL release"]["status"] == "substituted" and "bnpo" in groups["TRL release"]["detail"]
    assert groups["loss"]["detail"].startswith("bnpo")  # 0.19's default loss ran, not 1.16's dapo
    assert sorted(p.name for p in recipe.parent.iterdir() if p.name.startswith(".")) == []  # the copy is gone


def test_smoke_judges_a_file_invalid_for_its_release_as_that_release(recipe):
    recipe.write_text(recipe.read_text().replace("scale_rewards: false", "scale_rewards: group"))
    code, report = smoke(recipe, "--trl-version", "0.19")  # 0.19's parser refuses the word
    assert code == 1 and report["component"] == "config" and "TRL 0.19" in report["error"]
    assert "GRPO-T013" in report["log"]


def test_the_files_comment_names_the_release_for_smoke_and_train(recipe, capsys):
    from grpo_schema import check_file
    from grpo_schema.commands.trl_release import judged_release

    recipe.write_text("# grpo: --trl-version 0.19\n" + recipe.read_text())
    assert judged_release(None, str(recipe)) == {"trl_version": "0.19", "trl_version_source": "comment"}
    assert judged_release("1.16", str(recipe))["trl_version"] == "1.16"  # the flag wins
    # grpo train --dry-run reads the same comment: valid, and its config carries 0.19's meaning
    from grpo_runtime.launch.cli import train_command

    assert train_command([str(recipe), "--dry-run"]) == 0
    assert check_file(recipe).config.loss_type == "bnpo"


def test_a_failure_names_the_line_of_the_users_own_file(recipe):
    # a reward module that cannot be imported, below the keys the rewrite removes or renames
    text = recipe.read_text().replace("reward_funcs:\n- my_rewards_019.length\n", "")
    text += "reward_funcs:\n- no_such_module_019.reward\n"  # after max_prompt_length, which the rewrite removes
    recipe.write_text(text)
    code, report = smoke(recipe, "--trl-version", "0.19")
    assert code == 3 and report["component"] == "reward function no_such_module_019.reward", report
    number = text.splitlines().index("- no_such_module_019.reward") + 1
    assert report["config_line"] == {"line": number, "text": "- no_such_module_019.reward"}


@pytest.mark.parametrize("installed, code", [("0.19.1", 0), ("1.16.0", 1)])
def test_train_dry_run_judges_the_file_as_the_installed_trl(recipe, monkeypatch, capsys, installed, code):
    """A user whose environment pins trl 0.19 gets the same answer from `grpo train --dry-run` as from `grpo
    validate` and `grpo smoke`: the 0.19 recipe is valid for 0.19 (and runs with 0.19's defaults), not for 1.16."""
    import grpo_schema.versions.detect as detect
    from grpo_runtime.launch.cli import train_command

    monkeypatch.setattr(detect, "installed_version", lambda search_path=None: (installed, "METADATA"))
    assert train_command([str(recipe), "--dry-run"]) == code
    said = capsys.readouterr()
    if code:
        assert f"judged as TRL {installed} (the trl installed beside this Python)" in said.err
        assert "GRPO-K003" in said.err


def test_grpo_train_says_what_an_older_release_did_that_the_runtime_cannot_keep(tmp_path, capsys):
    from grpo_runtime.launch.cli import train_command

    path = tmp_path / "old.yaml"
    path.write_text(
        "# grpo: --trl-version 0.19\nmodel_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\n"
        "dataset_name: trl-lib/tldr\nreward_funcs: [think_format_reward]\nmax_prompt_length: 256\n"
        "per_device_train_batch_size: 8\nnum_generations: 8\n"
    )
    assert train_command([str(path), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "written for TRL 0.19" in err and "max_prompt_length" in err
    path.write_text(path.read_text().replace("max_prompt_length: 256\n", ""))  # nothing 1.16 cannot keep: no warning
    assert train_command([str(path), "--dry-run"]) == 0
    assert "cannot keep" not in capsys.readouterr().err


def test_keys_the_release_ignores_are_left_out_of_the_run_and_said(recipe):
    """TRL 0.22 ignores a key it does not read (a warning): the run leaves it out rather than hold it to 1.16, where
    it is an error (an unknown key) or a setting 0.22 never had; the vllm_mode 0.22 defaulted to is not written
    for a file that does not use vLLM (it would only earn a warning the user's file never had)."""
    from pathlib import Path

    from grpo_runtime.smoke.command import parser
    from grpo_runtime.smoke.release import release_check
    from grpo_runtime.smoke.rewrite import translate_for_runtime
    from grpo_schema import check_file

    recipe.write_text(recipe.read_text() + "vllm_importance_sampling_cap: 3.0\nsomeone_elses_key: 1\n")
    release = {"trl_version": "0.22", "trl_version_source": "flag"}
    args = parser().parse_args([str(recipe), "--trl-version", "0.22"])
    assert release_check(args, release) is None
    translated = translate_for_runtime(args, release)
    try:
        copy = check_file(translated["file"])
        assert copy.valid, [d.message for d in copy.diagnostics if d.severity == "error"]
        assert not [d.code for d in copy.diagnostics if d.severity != "info"], copy.diagnostics
        assert "vllm_mode" not in copy.raw and "someone_elses_key" not in copy.raw
    finally:
        Path(translated["file"]).unlink()
    said = {g["group"]: g for g in translated["groups"]}["keys TRL 0.22 ignores"]
    assert said["status"] == "not_exercised"
    assert "vllm_importance_sampling_cap, someone_elses_key" in said["detail"]
    assert "vllm_mode" not in translated["groups"][0]["detail"]


def test_another_trainers_keys_are_refused_with_the_reason(recipe):
    recipe.write_text(recipe.read_text() + "critic_warmup: 0\nppo_mini_batch_size: 4\n")
    code, report = smoke(recipe, "--trl-version", "0.19")  # 0.19's parser stops on keys it does not know
    assert code == 3 and report["component"] == "trainer", report
    assert "critic_warmup, ppo_mini_batch_size" in report["error"] and "another trainer" in report["error"]


def test_diagnostics_of_the_rewritten_copy_point_at_the_users_lines(recipe):
    from pathlib import Path

    from grpo_runtime.smoke.command import parser
    from grpo_runtime.smoke.release import release_check
    from grpo_runtime.smoke.rewrite import lines_of_original, translate_for_runtime

    release = {"trl_version": "0.19", "trl_version_source": "flag"}
    args = parser().parse_args([str(recipe), "--trl-version", "0.19"])
    assert release_check(args, release) is None
    translated = translate_for_runtime(args, release)
    Path(translated["file"]).unlink()
    copy_lines = translated["text"].splitlines()
    at = next(n for n, line in enumerate(copy_lines, 1) if line.startswith("seed:"))
    added = next(n for n, line in enumerate(copy_lines, 1) if line.startswith("loss_type:"))
    log = (
        f"{translated['file']}:{at}:1: error[X] about seed\n  {at} | seed: 42\n"
        f"{translated['file']}:{added}:1: warning[Y] about loss_type\n"
    )
    mine = recipe.read_text().splitlines().index("seed: 42") + 1
    assert at != mine  # the rewrite moved the line
    shown = lines_of_original(log, translated["file"], translated["text"], str(recipe))
    assert f"{recipe}:{mine}:1: error[X]" in shown and f"  {mine} | seed: 42" in shown
    assert f"{recipe} (a line the TRL 1.16 rewrite added: loss_type: bnpo" in shown
    assert ".grpo-smoke" not in shown
