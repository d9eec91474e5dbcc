"""vLLM's colocated share of each GPU: too small for one sequence's KV cache (GRPO-H004, vLLM refuses to start),
or for one generation batch (GRPO-H003, generation takes several rounds)."""

from __future__ import annotations

import textwrap

import pytest

from grpo_schema.commands.plan import check_for_hardware

# A 7B LoRA run on 8xH100-80GB with vLLM colocated: the weights take 14.2 GiB of vLLM's share.
RUN = textwrap.dedent("""\
    model_name_or_path: Qwen/Qwen2.5-7B-Instruct
    dataset_name: trl-lib/DeepMath-103K
    reward_funcs: [accuracy_reward]
    dtype: bfloat16
    per_device_train_batch_size: 16
    gradient_accumulation_steps: 4
    num_generations: 16
    max_completion_length: 4096
    use_vllm: true
    vllm_mode: colocate
    use_peft: true
    """)


def _vllm_diagnostics(utilization: float):
    text = RUN + f"vllm_gpu_memory_utilization: {utilization}\n"
    _, report = check_for_hardware(text.encode(), "run.yaml", "8xH100-80GB")
    return [d for d in report.diagnostics if d.fields == ("vllm_gpu_memory_utilization",)]


def test_a_share_that_holds_the_weights_but_not_one_sequence_is_refused():
    [diag] = _vllm_diagnostics(0.19)
    assert (diag.code, diag.severity) == ("GRPO-H004", "error")
    assert "0.19 x 80 GiB = 15.2 GiB" in diag.message and "not one 4608-token sequence" in diag.message
    assert "raise vllm_gpu_memory_utilization" in diag.hint


@pytest.mark.parametrize("utilization, rounds", [(0.2, 20), (0.25, 4)])
def test_a_kv_cache_smaller_than_a_generation_batch_means_rounds_of_generation(utilization, rounds):
    [diag] = _vllm_diagnostics(utilization)
    assert (diag.code, diag.severity) == ("GRPO-H003", "warning")
    assert "64 sequences x 4608 tokens" in diag.message and f"about {rounds} rounds" in diag.message


def test_a_share_with_room_for_the_batch_says_nothing():
    assert _vllm_diagnostics(0.3)[0].code == "GRPO-H003"  # 165k tokens of 295k: still short
    text = RUN.replace("max_completion_length: 4096", "max_completion_length: 512")
    _, report = check_for_hardware((text + "vllm_gpu_memory_utilization: 0.3\n").encode(), "run.yaml", "8xH100-80GB")
    assert not [d for d in report.diagnostics if d.code in ("GRPO-H003", "GRPO-H004")]
