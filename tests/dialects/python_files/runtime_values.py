import argparse

import yaml
from trl import GRPOConfig


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-5)
    args = parser.parse_args()
    with open("config.yaml") as handle:
        extra = yaml.safe_load(handle)
    return GRPOConfig(
        output_dir="out",
        learning_rate=args.lr,
        num_generations=4,
        **extra,
    )
