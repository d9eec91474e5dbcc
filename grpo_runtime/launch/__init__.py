"""How a run is started: the `grpo train` / `grpo launch` / `grpo demo` commands, checking before a run, Slurm,
the tiny offline model and the memory probe. The top of grpo_runtime: it may import every layer below."""
