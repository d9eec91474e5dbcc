from dataclasses import dataclass

from trl import GRPOConfig


@dataclass
class MyConfig(GRPOConfig):
    judge_model: str = "gpt"


config = MyConfig(output_dir="out", num_generations=4)
plain = GRPOConfig(output_dir="out", num_generations=4, per_device_train_batch_size=4)
