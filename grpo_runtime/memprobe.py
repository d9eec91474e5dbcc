"""`python -m grpo_runtime.memprobe`, as the README and benchmarks name it: grpo_runtime.launch.memprobe."""

import sys

from grpo_runtime.launch.memprobe import main

if __name__ == "__main__":
    sys.exit(main())
