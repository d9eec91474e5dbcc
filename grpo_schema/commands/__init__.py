"""The `grpo` subcommands and `grpo validate` options beyond the check itself: explain, migrate, plan, schema
export, the world-size matrix and --fix. The CLI imports each only when it runs."""
