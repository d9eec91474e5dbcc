from unsloth import FastLanguageModel  # noqa: F401  (swaps in UnslothGRPOConfig)
from trl import GRPOConfig

args = GRPOConfig(
    output_dir="outputs",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=1,
    num_generations=4,
    unsloth_num_chunks=2,
)
model, tokenizer = FastLanguageModel.from_pretrained(model_name="Qwen/Qwen2.5-0.5B-Instruct")
