"""A recipe written for TRL 0.19 and `grpo validate` judging it (in process, in the checkout): what the release
tests of every surface start from."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import grpo as grpo_command

REPO = Path(__file__).resolve().parents[2]

# Written for TRL 0.19: old names 0.19 reads, its boolean scale_rewards, defaults left to 0.19.
OLD_RECIPE = """model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [think_format_reward]  # 0.19.1's script registers only this one
max_prompt_length: 512
warmup_ratio: 0.1
scale_rewards: true
per_device_train_batch_size: 8
num_generations: 8
"""


def grpo(*args: str, cwd: Path = REPO):
    """`grpo ARGS` in process, in the checkout unless `cwd` says otherwise."""
    return grpo_command(*args, cwd=cwd)


def file_object(*args: str) -> dict:
    """The file object of `grpo validate --format json ARGS`."""
    done = grpo("validate", "--format", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["files"][0]


# Written for TRL 0.14 and judged at 0.19 (its comment): two keys 0.19 no longer reads (vllm_device, gone in 0.18;
# evaluation_strategy, transformers' old name of eval_strategy) and 0.14's batch in prompts per device.
OLD_014_JUDGED_AT_019 = """# grpo: --trl-version 0.19
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]
output_dir: out
per_device_train_batch_size: 2
num_generations: 4
use_vllm: true
vllm_device: cuda:1  # the generation GPU
evaluation_strategy: steps
"""
