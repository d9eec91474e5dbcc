"""Configs more than one test folder reads: the files of an open-r1 style training repository
(tests/fixtures/recognise) and two plans, one that fits and one that does not."""

from __future__ import annotations

import textwrap

from tests.conftest import FIXTURES

RECOGNISE = FIXTURES / "recognise"
ACCELERATE = RECOGNISE / "recipes" / "accelerate_configs" / "zero3.yaml"
DDP = RECOGNISE / "recipes" / "accelerate_configs" / "ddp.yaml"
SFT = RECOGNISE / "recipes" / "Tiny-Math-1B" / "sft" / "config_distill.yaml"
GRPO_RECIPE = RECOGNISE / "recipes" / "Tiny-Math-1B" / "grpo" / "config_demo.yaml"
WORKFLOW = RECOGNISE / ".github" / "workflows" / "train.yml"
FORK = RECOGNISE / "configs" / "fork_run.yaml"
DEEPSPEED = RECOGNISE / "deepspeed" / "ds_zero2.json"

# `grpo plan` exits 1 when the config itself has errors, so both name a dataset and a reward.
SMALL = textwrap.dedent("""\
    model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
    dataset_name: trl-lib/DeepMath-103K
    reward_funcs: [accuracy_reward]
    dtype: bfloat16
    per_device_train_batch_size: 4
    gradient_accumulation_steps: 4
    num_generations: 8
    max_completion_length: 512
    """)
# A 7B model trained in full on one 80 GB GPU with vLLM colocated: does not fit as written.
BIG = textwrap.dedent("""\
    model_name_or_path: Qwen/Qwen2.5-7B-Instruct
    dataset_name: trl-lib/DeepMath-103K
    reward_funcs: [accuracy_reward]
    dtype: bfloat16
    per_device_train_batch_size: 16
    gradient_accumulation_steps: 4
    num_generations: 16
    max_completion_length: 1024
    use_vllm: true
    vllm_gpu_memory_utilization: 0.5
    gradient_checkpointing: false
    """)


# Valid at any world size and launchable by the service (a run of it fails at once offline: no such model).
LAUNCHABLE = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
"""
