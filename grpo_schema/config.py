"""GRPORunConfig: the flat `trl grpo` config, composed from the parameter-area classes.

TRL reads one flat YAML mapping into four dataclasses (GRPOScriptArguments, GRPOConfig with all of
TrainingArguments, ModelConfig, DatasetMixtureConfig). Here the same keys form one frozen model; the area classes
only group fields for documentation, the JSON Schema and the web form.
"""

from __future__ import annotations

from functools import lru_cache

from grpo_schema.params.base import AreaParams
from grpo_schema.params.batch import BatchParams
from grpo_schema.params.checkpoint import CheckpointParams, HubParams
from grpo_schema.params.data import DataloaderParams, DataParams
from grpo_schema.params.distributed import DistributedParams, RunParams
from grpo_schema.params.entropy import EntropyParams
from grpo_schema.params.eval import EvalParams
from grpo_schema.params.generation import GenerationParams
from grpo_schema.params.importance_sampling import ImportanceSamplingParams
from grpo_schema.params.logging import LoggingParams
from grpo_schema.params.loss import LossParams, ReferenceParams
from grpo_schema.params.memory import MemoryParams
from grpo_schema.params.model import ModelParams
from grpo_schema.params.optim import OptimParams
from grpo_schema.params.peft import PeftParams, QuantizationParams
from grpo_schema.params.performance import PerformanceParams
from grpo_schema.params.precision import PrecisionParams
from grpo_schema.params.rewards import RewardParams
from grpo_schema.params.vllm import VllmParams

# Form order: what a user edits most comes first.
AREA_CLASSES: tuple[type[AreaParams], ...] = (
    ModelParams, DataParams, RewardParams, BatchParams, GenerationParams, LossParams, ReferenceParams,
    ImportanceSamplingParams, EntropyParams, VllmParams, OptimParams, PrecisionParams, MemoryParams,
    PeftParams, QuantizationParams, LoggingParams, EvalParams, CheckpointParams, HubParams, DistributedParams,
    DataloaderParams, PerformanceParams, RunParams,
)


class GRPORunConfig(*reversed(AREA_CLASSES)):  # type: ignore[misc]
    """Every field of TRL 1.16's `trl grpo` surface, with TRL's names and defaults."""


@lru_cache(maxsize=None)
def field_areas() -> dict[str, type[AreaParams]]:
    """Field name -> the area class that declares it (the class nearest in the MRO)."""
    out: dict[str, type[AreaParams]] = {}
    for cls in AREA_CLASSES:
        for name in cls.model_fields:
            out.setdefault(name, cls)
    return out


FIELD_NAMES: frozenset[str] = frozenset(GRPORunConfig.model_fields)
