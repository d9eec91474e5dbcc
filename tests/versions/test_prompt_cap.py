"""The memory plan's prompt length at the judged release: up to TRL 0.27 every prompt is cut to max_prompt_length
before generation (the file's, else the release's default), so the plan never sizes a longer one; from 0.28 prompts
are kept whole."""

from __future__ import annotations

import json

import pytest

from grpo_schema.cli import main

RECIPE = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/tldr\nreward_funcs: [accuracy_reward]\n"
    "per_device_train_batch_size: 8\nnum_generations: 8\nmax_completion_length: 1024\n"
)


def planned(tmp_path, capsys, extra: str, release: str, *options: str) -> tuple[int, list[str]]:
    path = tmp_path / "r.yaml"
    path.write_text(RECIPE + extra)
    main(["plan", str(path), "--trl-version", release, "--hardware", "1xH100-80GB", "--format", "json", *options])
    document = json.loads(capsys.readouterr().out)["files"][0]
    return document["settings"]["prompt_length"], document["assumptions"]


def test_the_plan_sizes_the_file_s_cap_where_the_release_truncates(tmp_path, capsys):
    length, assumptions = planned(tmp_path, capsys, "max_prompt_length: 10000\n", "0.19.1")
    assert length == 10000
    assert any("TRL 0.19.1 truncates prompts to it" in a for a in assumptions)


def test_the_release_s_default_cap_stands_when_the_file_leaves_it_out(tmp_path, capsys):
    length, assumptions = planned(tmp_path, capsys, "", "0.16.1", "--prompt-length", "4000")
    assert length == 512  # 0.16.1 cuts a 4000-token prompt to its default 512
    assert any("truncated to 512 tokens: TRL 0.16.1's default max_prompt_length" in a for a in assumptions)


@pytest.mark.parametrize("release", ["0.28.0", "1.16.0"])
def test_releases_that_keep_whole_prompts_plan_the_length_given(tmp_path, capsys, release):
    length, _ = planned(tmp_path, capsys, "max_prompt_length: 256\n", release, "--prompt-length", "4000")
    assert length == 4000


def test_a_null_cap_keeps_whole_prompts(tmp_path, capsys):
    length, _ = planned(tmp_path, capsys, "max_prompt_length: null\n", "0.19.1", "--prompt-length", "4000")
    assert length == 4000


def test_releases_that_parse_the_cap_and_ignore_it_plan_the_length_given(tmp_path, capsys):
    """0.26-0.27 still parse max_prompt_length (deprecated, default None) but truncate nothing."""
    length, assumptions = planned(tmp_path, capsys, "max_prompt_length: 256\n", "0.26.2", "--prompt-length", "4000")
    assert length == 4000
    length, assumptions = planned(tmp_path, capsys, "max_prompt_length: 256\n", "0.25.1", "--prompt-length", "4000")
    assert length == 256


def test_016_generates_one_micro_batch_at_a_time_even_when_it_reuses_them(tmp_path, capsys):
    """0.16 with num_iterations 2 is walked as one generation of gradient_accumulation_steps slices, but each
    micro-step generated its own 8 rows: the memory plan holds 8 generated rows, not 32."""
    path = tmp_path / "r.yaml"
    path.write_text(RECIPE + "gradient_accumulation_steps: 4\nnum_iterations: 2\n")

    def rows(release):
        main(["plan", str(path), "--trl-version", release, "--hardware", "1xH100-80GB", "--format", "json"])
        return json.loads(capsys.readouterr().out)["files"][0]["settings"]["generation_rows"]

    assert rows("0.16.1") == 8
    assert rows("0.17.0") == 32  # 0.17 generated the four micro-batches at once
