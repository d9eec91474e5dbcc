"""Training runs started by the service (interface.md §5, docs/runs.md).

Kept free of imports: `python -m grpo_web.runs.wrapper`, the leader of every run's process group, loads this package.
"""
