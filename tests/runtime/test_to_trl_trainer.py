"""grpo-config as the gate in front of TRL's own GRPOTrainer: a YAML file, validated by GRPORunConfig, becomes
TRL's dataclasses (to_trl) and trains one optimizer step on the tiny local model."""

import pytest

from grpo_runtime.data.reward_library import target_word_reward
from grpo_schema import GRPORunConfig

from .trl_harness import prompt_dataset

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def test_grpo_trainer_from_to_trl_runs_a_step(tmp_path, tiny_model_dir):
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer, ModelConfig

    text = f"""
model_name_or_path: {tiny_model_dir}
dataset_name: local-prompts
reward_funcs: [grpo_runtime.data.reward_library.target_word_reward]
output_dir: {tmp_path / "out"}
per_device_train_batch_size: 4
num_generations: 2
max_completion_length: 5
learning_rate: 1e-3
max_steps: 1
logging_steps: 1
save_strategy: "no"
report_to: none
disable_tqdm: true
use_cpu: true
bf16: false
seed: 0
"""
    config = GRPORunConfig.from_yaml(text)
    script_args, training_args, model_args, dataset_args = config.to_trl()
    assert isinstance(training_args, GRPOConfig) and isinstance(model_args, ModelConfig)
    assert training_args.learning_rate == 1e-3 and training_args.generation_batch_size == 4
    prompts = prompt_dataset(8)  # "say cat", "say dog", ...: the reward is the share of the asked-for word
    prompts = prompts.add_column("target", [row["prompt"][0]["content"].split()[-1] for row in prompts])
    trainer = GRPOTrainer(
        model=model_args.model_name_or_path,
        reward_funcs=[target_word_reward],
        args=training_args,
        train_dataset=prompts,
        processing_class=AutoTokenizer.from_pretrained(tiny_model_dir),
    )
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    output = trainer.train()
    assert trainer.state.global_step == 1 and output.global_step == 1
    changed = [name for name, p in trainer.model.named_parameters() if not p.detach().equal(before[name])]
    assert changed, "one optimizer step with lr 1e-3 changes the weights"
    assert any("reward" in entry for entry in trainer.state.log_history)
