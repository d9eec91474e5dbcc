"""GRPORunConfig: the flat `trl grpo` config, composed from the parameter-area classes.

TRL reads one flat YAML mapping into four dataclasses (GRPOScriptArguments, GRPOConfig with all of
TrainingArguments, ModelConfig, DatasetMixtureConfig). Here the same keys form one frozen model; the area classes
only group fields for documentation, the JSON Schema and the web form.

Constructing or validating the model runs the whole rule engine (grpo_schema.api.modelcheck): every problem
`grpo validate` reports as an error raises, all at once, as one pydantic ValidationError.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from pydantic import PrivateAttr, ValidationInfo, ValidatorFunctionWrapHandler, model_validator

from grpo_schema.engine.params.areas import AREA_CLASSES, FIELD_NAMES  # noqa: F401  (FIELD_NAMES: re-exported)
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

if TYPE_CHECKING:
    from grpo_schema.api.trl_export import TrlArgs
    from grpo_schema.engine.check import CheckResult
    from grpo_schema.engine.check_input import Override
    from grpo_schema.engine.diagnostics import Diagnostic
    from grpo_schema.engine.plan import RunPlan
    from grpo_schema.engine.profiles import Profile
    from grpo_schema.engine.view import ConfigView


# The bases are AREA_CLASSES reversed (so that the first area's fields come first), written out for type checkers.
class GRPORunConfig(
    RunParams,
    PerformanceParams,
    DataloaderParams,
    DistributedParams,
    HubParams,
    CheckpointParams,
    EvalParams,
    LoggingParams,
    QuantizationParams,
    PeftParams,
    MemoryParams,
    PrecisionParams,
    OptimParams,
    VllmParams,
    EntropyParams,
    ImportanceSamplingParams,
    ReferenceParams,
    LossParams,
    GenerationParams,
    BatchParams,
    RewardParams,
    DataParams,
    ModelParams,
):
    """Every field of TRL 1.16's `trl grpo` surface, with TRL's names and defaults, checked by every rule.

    `GRPORunConfig(**fields)` and `GRPORunConfig.model_validate(mapping, context={...})` run the same engine as
    `grpo validate` and raise one `pydantic.ValidationError` listing every error: each error's `type` is the
    stable code (`GRPO-B001`), `loc` the fields, `msg` the message and `ctx` the `hint`, the `fix` (a Fix as a
    dict, or None) and the position. The context may declare `world_size` (default: num_processes from the
    mapping, else 1), `profiles` (names or Profile objects), `allow_env` (env: names refused by default) and
    `overrides`. Warnings never raise: they are in `.diagnostics`.

    The mapping may hold what a `trl grpo` file holds besides TRL's fields: `env:`, `accelerate launch` keys and
    the active profiles' script keys; they are on `.env`, `.launch` and `.script_args`.
    """

    _result: CheckResult | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _run_engine(cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> GRPORunConfig:
        from grpo_schema.api.modelcheck import validate_hook

        return validate_hook(cls, data, handler, info.context)

    def __eq__(self, other: object) -> bool:
        """Equal when the field values are (what the engine reported, e.g. positions, is not compared)."""
        return type(other) is type(self) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # lists and dicts inside

    # --- what the engine found besides the fields ------------------------------------------------------------
    @property
    def check_result(self) -> CheckResult:
        """The engine's full result (diagnostics, plan, env, launch keys, script arguments, positions)."""
        if self._result is None:  # built without the engine (model_construct): check it now
            from grpo_schema.engine.validate import check_mapping

            self._result = check_mapping(self.model_dump(exclude_unset=True), path="<model>")
        return self._result

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Warnings and infos of the config (errors raise instead), each with its code, fields, hint and fix."""
        return list(self.check_result.diagnostics)

    @property
    def world_size(self) -> int:
        """The declared world size it was checked at (context, else num_processes, else 1)."""
        return self.check_result.world_size

    @property
    def plan(self) -> RunPlan | None:
        """The derived batch schedule at the declared world size (grpo_schema.engine.plan.RunPlan)."""
        return self.check_result.plan

    def derive_plan(self, world_size: int | None = None, dataset_size: int | None = None) -> RunPlan | None:
        """The batch schedule at another world size (with a dataset size, also the epoch arithmetic); None when
        TRL would refuse the batch geometry there."""
        from grpo_schema.engine.plan import derive_plan

        return derive_plan(self, world_size or self.world_size, dataset_size=dataset_size)

    @property
    def env(self) -> dict[str, str]:
        """The `env:` section as accepted (values as strings)."""
        return dict(self.check_result.env)

    @property
    def launch(self) -> dict[str, Any]:
        """`accelerate launch` options from the mapping (num_processes, mixed_precision, ...)."""
        return dict(self.check_result.launch)

    @property
    def script_args(self) -> dict[str, ConfigView]:
        """Profile name -> the validated script arguments of that project (e.g. open-r1's keys)."""
        return dict(self.check_result.profile_args)

    # --- round trips -------------------------------------------------------------------------------------------
    @classmethod
    def from_yaml(
        cls,
        source: str | bytes | Path,
        *,
        world_size: int | None = None,
        profiles: Sequence[str | Profile] = (),
        allow_env: Sequence[str] = (),
        overrides: Sequence[Override | str] | Mapping[str, Any] = (),
    ) -> GRPORunConfig:
        """Read a `trl grpo` YAML (or JSON) file, given as a path or as the text itself.

        Raises pydantic.ValidationError listing every error, each with its line and column in `ctx`
        (`OSError` when a path cannot be read). A str that names an existing file, or a Path, is read as a file;
        any other str (several lines, or `key: value`) is the YAML text."""
        from grpo_schema.api.modelcheck import as_overrides, from_result
        from grpo_schema.engine.validate import check_text

        options: dict[str, Any] = {
            "world_size": world_size,
            "profiles": tuple(profiles),
            "allow_env": tuple(allow_env),
            "overrides": as_overrides(overrides),
        }
        path, text = _source(source)
        return from_result(cls, check_text(text, path=path, **options))

    def to_yaml(self, *, modeline: bool = True, defaults: bool = False) -> str:
        """The config as a `trl grpo --config` file: the schema modeline (for editors), the fields that were set
        (all fields with defaults=True), then the script, launch and env keys. Reads back to an equal config."""
        from grpo_schema.api.yaml_out import config_yaml

        return config_yaml(self, modeline=modeline, defaults=defaults)

    def to_trl(self, *, script_args_class: type | None = None, config_class: type | None = None) -> TrlArgs:
        """TRL 1.16's own objects for this config: (GRPOScriptArguments, GRPOConfig, ModelConfig,
        DatasetMixtureConfig), as `trl grpo` parses the same file. Needs trl installed (`pip install trl==1.16.0`).
        See grpo_schema.api.trl_export.to_trl."""
        from grpo_schema.api.trl_export import to_trl

        return to_trl(self, script_args_class=script_args_class, config_class=config_class)


def trusted_model(values: Mapping[str, Any]) -> GRPORunConfig:
    """The model of values the engine has already checked (ConfigView.to_model): the engine does not run again."""
    from grpo_schema.api.modelcheck import TRUSTED

    return GRPORunConfig.model_validate(values, context={TRUSTED: True})


def _source(source: str | bytes | Path) -> tuple[str, str | bytes]:
    if isinstance(source, Path):
        return str(source), source.read_bytes()
    # A one-line str is a path unless it reads as YAML ("key: value"): `from_yaml("runs/a.yaml")` must not
    # validate the string "runs/a.yaml", and a missing file is an OSError, not an empty config.
    if isinstance(source, str) and "\n" not in source and ": " not in source and len(source) < 4096 and source.strip():
        candidate = Path(source)
        if candidate.suffix in (".yaml", ".yml", ".json") or candidate.is_file():
            return source, candidate.read_bytes()
    return "<string>", source


@lru_cache(maxsize=None)
def field_areas() -> dict[str, type[AreaParams]]:
    """Field name -> the area class that declares it (the class nearest in the MRO)."""
    out: dict[str, type[AreaParams]] = {}
    for cls in AREA_CLASSES:
        for name in cls.model_fields:
            out.setdefault(name, cls)
    return out
