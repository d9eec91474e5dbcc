"""Wording and predicates several of the field tables use."""

from __future__ import annotations

from grpo_runtime.common import Setting
from grpo_runtime.distributed.accelerate import weights_sharded


def sharded_weights(s: Setting) -> bool:
    return weights_sharded(s.config, s.launch)


def only_with(switch: str, what: str) -> str:
    return f"read only with {switch} ({what}); without it TRL 1.16 ignores it too"


EVAL_PREDICTIONS = (
    "HF's evaluation loop uses it for predictions and compute_metrics; GRPOTrainer's evaluation "
    "returns only metrics, so TRL 1.16 ignores it too"
)
