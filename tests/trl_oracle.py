"""TRL 1.16's GRPOConfig as a test oracle, built at a declared world size.

TRL reads the world size from the launcher; here `transformers.TrainingArguments.world_size` is patched with a
property returning the declared size while the config is built, with bf16 neutralised by use_cpu=True (TRL's bf16
default would otherwise fail on any machine without a bf16 GPU). Import this only from tests marked `oracle`.
"""

from __future__ import annotations

import warnings
from typing import Any
from unittest import mock


def build_grpo_config(values: dict[str, Any], world_size: int) -> Any:
    """GRPOConfig(**values) as TRL builds it at `world_size`, or the exception TRL raises."""
    import trl
    from transformers import TrainingArguments

    declared = property(lambda self: world_size)
    with mock.patch.object(TrainingArguments, "world_size", declared), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return trl.GRPOConfig(**{"output_dir": "unused", "use_cpu": True, "report_to": "none", **values})
        except (ValueError, ZeroDivisionError, TypeError) as exc:
            return exc
