"""A verl run more than one test folder reads: a GRPO launch script of verl's trainer that the conversion to TRL
carries whole (LoRA, optimizer offload, vLLM rollout on one node of 8 GPUs)."""

RUN = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=64 \\
    data.max_prompt_length=512 \\
    data.max_response_length=1024 \\
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B \\
    actor_rollout_ref.model.lora_rank=32 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=True \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.rollout.n=8 \\
    actor_rollout_ref.rollout.gpu_memory_utilization=0.4 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \\
    trainer.n_gpus_per_node=8 trainer.nnodes=1
"""

# A GRPO launch on one node of 8 GPUs whose last line continues, for a test to append the overrides it compares.
LAUNCH_HEAD = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=64 \\
    actor_rollout_ref.rollout.n=8 \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.actor.ppo_mini_batch_size=16 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \\
    trainer.n_gpus_per_node=8 trainer.nnodes=1 \\
"""
