"""`grpo smoke`: a config's first optimizer steps on this machine's CPUs, read in order as one pipeline:

1. command: the `grpo smoke` command; checks the config, then drives the steps below and prints the report.
2. plan: what is substituted and why (SmokePlan), the parts' shared words (exercised, substituted, elsewhere).
3. the substitutions, one module a part of the config: model (model, tokenizer, reward model), data (the dataset),
   settings (GPU-only settings, DeepSpeed, world size, the batch bound), code (a code reward's sandbox) with
   problems (small real programming problems for code rewards' rows), rewards (importing the reward functions).
4. worker: one process of the run (`python -m grpo_runtime.smoke.worker SPEC.json`), first step, then the resume.
5. report: the completions and the log read back, the report as text.
6. faults: how a failure is named (the reward and completion, the column, the component, the user's frames).
"""
