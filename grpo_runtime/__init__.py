"""grpo_runtime: a compact GRPO trainer that runs configs validated by `grpo_schema`.

It reads only the validated config and its run plan, and reproduces the numbers of TRL 1.16's `GRPOTrainer`
(sampler order, buffering, advantages, every loss type) on torch + transformers + accelerate. Entry points:
`grpo train FILE`, `grpo launch FILE --num-processes N` and `grpo demo DIR` (see `grpo_runtime.launch.cli`), or
`grpo_runtime.train.main(config, plan)` from Python.

Importing this package is cheap: torch and transformers are imported by the modules that need them.
"""
