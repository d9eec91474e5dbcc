from trl import GRPOConfig

args = GRPOConfig(
    output_dir="outputs",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=1,
    num_generations=4,
)
