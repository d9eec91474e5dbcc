"""`python -m grpo_runtime.memprobe CASE [--device DEVICE]`: one case's parts as one JSON line."""

import sys

from grpo_runtime.memprobe.command import main

sys.exit(main())
