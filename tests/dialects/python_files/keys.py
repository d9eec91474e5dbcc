from trl import GRPOConfig

args = GRPOConfig(
    output_dir="outputs",
    max_prompt_length=512,  # removed in TRL 0.28
    per_device_train_batch_size=4,
    num_generations=4,
    vllm_importance_sampling_correction=True,  # came in TRL 0.23
    model_name_or_path="Qwen/Qwen2.5-0.5B",  # a `trl grpo` script key
)
