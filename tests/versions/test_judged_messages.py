"""Messages speak of the release judged: the release of the file's own minor (not the table it shares), its own
vLLM default, and no 'has no effect' about a mode the release does not have."""

from __future__ import annotations

from grpo_schema.engine.check import check_mapping

BASE = {"model_name_or_path": "Qwen/Qwen2.5-0.5B", "dataset_name": "trl-lib/tldr", "output_dir": "out"}


def messages(release: str, **keys) -> dict[str, str]:
    result = check_mapping({**BASE, **keys}, trl_version=release)
    return {d.code: d.message for d in result.diagnostics}


def test_a_release_sharing_an_older_table_is_named_as_itself():
    said = messages("1.2", reward_funcs=["accuracy_reward"], entropy_coef=0.1)
    assert "TRL 1.2.0" in said["GRPO-K009"] and "1.0.0" not in said["GRPO-K009"]
    said = messages("1.15", reward_funcs=["accuracy_reward"], activation_checkpointing=True)  # 1.14.2's table
    assert "TRL 1.15.0" in said["GRPO-K011"] and "1.14.2" not in said["GRPO-K011"]


def test_v002_names_the_judged_release_s_default():
    said = messages("0.19", reward_funcs=["think_format_reward"], use_vllm=True, vllm_gpu_memory_utilization=0.7)
    assert "TRL 0.19.1's default" in said["GRPO-V002"] and "1.16" not in said["GRPO-V002"]


def test_no_other_mode_before_vllm_mode_existed():
    """0.14-0.17 have no vllm_mode: a vLLM key is read or not by the release itself, never 'no effect in server'."""
    for release in ("0.14", "0.15", "0.16", "0.17"):
        assert "GRPO-V002" not in messages(release, use_vllm=True, vllm_gpu_memory_utilization=0.7)


def test_v006_only_where_the_release_colocates_by_default():
    keys = {"reward_funcs": ["think_format_reward"], "use_vllm": True, "vllm_gpu_memory_utilization": 0.7}
    assert "GRPO-V006" not in messages("0.19", **keys) and "GRPO-V006" not in messages("0.29", **keys)
    said = messages("1.2", **{**keys, "reward_funcs": ["accuracy_reward"]})
    assert "TRL 1.2.0 colocates" in said["GRPO-V006"]


def codes_on(release: str, **keys) -> list[str]:
    result = check_mapping({**BASE, "reward_funcs": ["think_format_reward"], **keys}, trl_version=release)
    return sorted(d.code for d in result.diagnostics)


def test_one_finding_for_a_value_the_release_s_trainer_refuses():
    assert codes_on("0.23", scale_rewards="maybe").count("GRPO-T003") == 1
    assert "GRPO-L004" not in codes_on("0.19", loss_type="cispo")  # 1.16's lint is not about a refused value


def test_a_launch_key_the_release_does_not_take_is_not_also_forwarded():
    for release in ("0.19", "0.22", "0.28"):
        found = codes_on(release, num_processes=4)
        assert "GRPO-K010" in found and "GRPO-K005" not in found
    assert "GRPO-K005" in codes_on("0.29", num_processes=4)


def test_a_python_annotation_as_a_value_gets_its_own_diagnostic():
    result = check_mapping(
        {
            **BASE,
            "reward_funcs": ["accuracy_reward"],
            "use_vllm": "bool = True",
            "beta": "float = 0.04",
            "use_vllm_server": "bool = True",
        }
    )
    by_key = {}
    for d in result.diagnostics:
        by_key.setdefault(d.fields[0] if d.fields else "", []).append(d.code)
    assert by_key["use_vllm"] == ["GRPO-Y017"] and by_key["beta"] == ["GRPO-Y017"]
    assert sorted(by_key["use_vllm_server"]) == ["GRPO-K001", "GRPO-Y017"]
    fix = next(d.fix for d in result.diagnostics if d.fields == ("use_vllm",))
    assert fix.set == {"use_vllm": True}
    assert result.config.use_vllm is True and result.config.beta == 0.04


def test_l002_is_neither_about_a_refused_value_nor_names_a_loss_the_release_refuses():
    """0.20-0.21 read importance_sampling_level but refuse luspo and vespo: a refused luspo is one finding (T003),
    not also an L002 about the default bnpo the user never wrote; bnpo with sequence-level ratios is told to use
    grpo, not luspo."""
    refused = codes_on("0.20", loss_type="luspo", importance_sampling_level="sequence")
    assert refused.count("GRPO-T003") == 1 and "GRPO-L002" not in refused
    result = check_mapping(
        {**BASE, "reward_funcs": ["think_format_reward"], "loss_type": "bnpo", "importance_sampling_level": "sequence"},
        trl_version="0.21",
    )
    [l002] = [d for d in result.diagnostics if d.code == "GRPO-L002"]
    assert "grpo" in l002.hint and "luspo" not in l002.hint
    at_116 = check_mapping(
        {**BASE, "reward_funcs": ["accuracy_reward"], "loss_type": "bnpo", "importance_sampling_level": "sequence"}
    )
    assert "luspo" in next(d.hint for d in at_116.diagnostics if d.code == "GRPO-L002")
