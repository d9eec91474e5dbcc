"""Two GRPOConfig calls: one through an alias, one through the module, with constants and arithmetic."""
import trl
from trl import GRPOConfig as Config

MAX_SEQ = 1024
PROMPT = 256
GENERATIONS = 2 * 4
COMMON = {"logging_steps": 5, "report_to": "none"}

first = Config(
    output_dir="out-a",  # a comment the reader keeps out of the values
    per_device_train_batch_size=GENERATIONS // 2,
    gradient_accumulation_steps=2,
    num_generations=GENERATIONS,
    max_completion_length=MAX_SEQ - PROMPT,
    learning_rate=5e-6,
    **COMMON,
)

second = trl.GRPOConfig("out-b", **{"num_generations": 3, "per_device_train_batch_size": 4})
