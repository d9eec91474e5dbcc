"""`grpo smoke`: a config's first optimizer steps on this machine's CPUs, read in order as one pipeline:

1. command: the `grpo smoke` command; checks the config, then drives the steps below and prints the report.
   release: a file written for another TRL release judged as that release reads it (and another trainer's file
   named); rewrite: such a file rewritten for TRL 1.16's terms, and what the run says pointed back at the file.
2. plan: what is substituted and why (SmokePlan), the parts' shared words (exercised, substituted, elsewhere).
3. substitutions: every substitution in order, then the smoke config checked again; one module a part of the config:
   model (model, tokenizer, reward model), data (the dataset), settings (GPU-only settings, DeepSpeed, world size,
   the batch bound), code (a code reward's sandbox) with problems (small real programming problems for code rewards'
   rows), rewards (importing the reward functions).
4. processes: starting the run's processes and reading their results; worker: one process of the run
   (`python -m grpo_runtime.smoke.worker SPEC.json`), first step, then the resume.
5. report: the report's fields, the completions and the log read back, the report as text.
6. faults: how a failure is named (the reward and completion, the column, the component, the user's frames).
"""
