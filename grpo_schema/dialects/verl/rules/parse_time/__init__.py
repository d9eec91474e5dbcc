"""The checks verl runs before Ray starts (since 0.9.0: main_ppo calls validate_config first), with its verdict.

Each rule fires exactly when verl's own check fails, on the same values: validate_config's batch divisibility and
its log-prob micro-batch pairs, ActorConfig's __post_init__ and validate, the validation sampling temperature.
verl stops at the first failure; these report every one at once. Importing this package registers the rules in
order: the actor's batch (`batches.py`), then the other workers' settings (`workers.py`).
"""

from grpo_schema.dialects.verl.rules.parse_time import batches, workers
from grpo_schema.dialects.verl.rules.parse_time.workers import VLLM_MAX_LORA_RANK, served_lora_rank

__all__ = ["VLLM_MAX_LORA_RANK", "batches", "served_lora_rank", "workers"]
