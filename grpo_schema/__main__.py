import sys

from grpo_schema.cli import main

sys.exit(main())
