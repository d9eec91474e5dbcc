"""`python -m grpo_runtime FILE [--set KEY=VALUE]...`: train in this process, as `grpo train` does.

This is what `grpo launch` starts in every process (through `accelerate launch`), each validating the file at the
launch's world size before it loads anything.
"""

import sys

from grpo_runtime.launch.cli import train_command

sys.exit(train_command(sys.argv[1:], prog="python -m grpo_runtime"))
