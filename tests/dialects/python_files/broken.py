from trl import GRPOConfig

config = GRPOConfig(output_dir="out", num_generations=4
