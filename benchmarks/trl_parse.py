"""Child process: exactly the parsing and validation `trl grpo --config FILE` does before it trains.

TRL 1.16's script builds TrlParser over (GRPOScriptArguments, GRPOConfig, ModelConfig, DatasetMixtureConfig) and
calls parse_args_and_config, which reads the YAML, applies `env:`, fills the four dataclasses and runs their
__post_init__ checks (trl/scripts/grpo.py). `--use_cpu true` neutralises bf16's hardware probe, which would fail
on a machine without a bf16 GPU; unknown keys are dropped as the script does. Nothing is trained.
"""

import sys


def make_fresh_parser():
    from trl.scripts.grpo import make_parser

    return make_parser()


def parse_with(parser, path: str):
    return parser.parse_args_and_config(["--config", path, "--use_cpu", "true"], fail_with_unknown_args=False)


if __name__ == "__main__":
    parse_with(make_fresh_parser(), sys.argv[1])
