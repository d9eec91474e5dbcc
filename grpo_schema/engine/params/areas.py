"""The parameter areas in form order, and every TRL field name they declare (GRPORunConfig's fields)."""

from __future__ import annotations

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.params.batch import BatchParams
from grpo_schema.engine.params.checkpoint import CheckpointParams, HubParams
from grpo_schema.engine.params.data import DataloaderParams, DataParams
from grpo_schema.engine.params.distributed import DistributedParams, RunParams
from grpo_schema.engine.params.entropy import EntropyParams
from grpo_schema.engine.params.eval import EvalParams
from grpo_schema.engine.params.generation import GenerationParams
from grpo_schema.engine.params.importance_sampling import ImportanceSamplingParams
from grpo_schema.engine.params.logging import LoggingParams
from grpo_schema.engine.params.loss import LossParams, ReferenceParams
from grpo_schema.engine.params.memory import MemoryParams
from grpo_schema.engine.params.model import ModelParams
from grpo_schema.engine.params.optim import OptimParams
from grpo_schema.engine.params.peft import PeftParams, QuantizationParams
from grpo_schema.engine.params.performance import PerformanceParams
from grpo_schema.engine.params.precision import PrecisionParams
from grpo_schema.engine.params.rewards import RewardParams
from grpo_schema.engine.params.vllm import VllmParams

# Form order: what a user edits most comes first.
AREA_CLASSES: tuple[type[AreaParams], ...] = (
    ModelParams,
    DataParams,
    RewardParams,
    BatchParams,
    GenerationParams,
    LossParams,
    ReferenceParams,
    ImportanceSamplingParams,
    EntropyParams,
    VllmParams,
    OptimParams,
    PrecisionParams,
    MemoryParams,
    PeftParams,
    QuantizationParams,
    LoggingParams,
    EvalParams,
    CheckpointParams,
    HubParams,
    DistributedParams,
    DataloaderParams,
    PerformanceParams,
    RunParams,
)

FIELD_NAMES: frozenset[str] = frozenset(name for area in AREA_CLASSES for name in area.model_fields)
