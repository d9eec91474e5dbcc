from unsloth import FastLanguageModel
from trl import GRPOConfig

# !pip install --no-deps trl==0.22.2

model, tokenizer = FastLanguageModel.from_pretrained(model_name="Qwen/Qwen2.5-0.5B-Instruct")
max_prompt_length = 256
training_args = GRPOConfig(
    output_dir="outputs",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=1,
    num_generations=4,
    max_prompt_length=max_prompt_length,
    max_completion_length=1024 - max_prompt_length,
)
