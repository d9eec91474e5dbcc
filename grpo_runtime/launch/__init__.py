"""Starting a run on this machine: the `grpo train` / `grpo launch` / `grpo demo` commands (cli, demo), checking a
config before any run starts (checking), the `accelerate launch` command line (process). Two layers: checking and
process sit below smoke/ and clusters/, which use them; cli and demo sit above, and hand `grpo launch --slurm`,
`--ray` and `--emit` to clusters/."""
