"""A validated config -> TRL 1.16's own argument objects, for users who keep TRL's GRPOTrainer.

`trl grpo --config FILE` fills four dataclasses from the flat YAML (GRPOScriptArguments, GRPOConfig, ModelConfig,
DatasetMixtureConfig): each key goes to every dataclass that has a field of that name. `to_trl` does the same with
the values grpo-config validated, so the objects equal what TRL's parser builds from the same file, and a config
that reached them has passed every rule first. TRL stays optional: it is imported here, on first use.

Nothing is dropped silently: `env:` and `accelerate launch` keys are returned beside the four objects (never
applied to this process), a profile's script keys go to the profile's script dataclass, and a key no dataclass
takes raises.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from grpo_schema.api.config import GRPORunConfig

TRL_SERIES = "1.16."


class TrlUnavailableError(ImportError):
    """TRL 1.16 is not installed (to_trl needs it; validation never does)."""


@dataclasses.dataclass(frozen=True)
class TrlArgs:
    """TRL's four objects for one config, unpackable in the order of TRL's script:

        script_args, training_args, model_args, dataset_args = config.to_trl()

    `env` (the `env:` section) and `launch` (`accelerate launch` options) are what `trl grpo` hands to the process
    environment and to the launcher; they are returned, not applied."""

    script_args: Any
    training_args: Any
    model_args: Any
    dataset_args: Any
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    launch: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.script_args, self.training_args, self.model_args, self.dataset_args))


def _import_trl() -> Any:
    try:
        import trl
        from trl.scripts.grpo import GRPOScriptArguments
    except ImportError as exc:
        raise TrlUnavailableError(
            "to_trl() builds TRL's own dataclasses and needs TRL 1.16: pip install 'trl==1.16.0' "
            f"(validation itself never needs TRL) [{exc}]"
        ) from exc
    if not trl.__version__.startswith(TRL_SERIES):
        raise TrlUnavailableError(
            f"grpo-config describes TRL {TRL_SERIES}x; trl {trl.__version__} is installed (pip install 'trl==1.16.0')"
        )
    return trl, GRPOScriptArguments


def to_trl(
    config: GRPORunConfig, *, script_args_class: type | None = None, config_class: type | None = None
) -> TrlArgs:
    """TRL's (GRPOScriptArguments, GRPOConfig, ModelConfig, DatasetMixtureConfig) for a validated config.

    `script_args_class` / `config_class` replace TRL's script-arguments and GRPOConfig dataclasses (for a project
    built on TRL's script, such as open-r1, pass its own subclasses). Without `script_args_class`, a config
    checked with a profile gets a dataclass extending TRL's GRPOScriptArguments with the profile's script keys.
    GRPOConfig's own checks run as they do under `trl grpo` (it reads the world size of the running process).
    Raises TrlUnavailableError without TRL, ValueError for a key no dataclass takes."""
    trl, script_base = _import_trl()
    script_cls = script_args_class or _profile_script_class(config, script_base)
    classes = (script_cls, config_class or trl.GRPOConfig, trl.ModelConfig, trl.DatasetMixtureConfig)
    values = _given_values(config)
    taken: set[str] = set()
    built = []
    for cls in classes:
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        mine = {key: value for key, value in values.items() if key in names}
        taken |= set(mine)
        built.append(cls(**mine))
    left = sorted(set(values) - taken)
    if left:
        raise ValueError(
            f"no TRL dataclass takes {', '.join(left)}: pass script_args_class= or config_class= "
            "with fields of these names (e.g. the training script's own dataclasses)"
        )
    result = config.check_result
    script_args, training_args, model_args, dataset_args = built
    return TrlArgs(
        script_args, training_args, model_args, dataset_args, env=dict(result.env), launch=dict(result.launch)
    )


def _given_values(config: GRPORunConfig) -> dict[str, Any]:
    """The keys the config sets, with their validated values: TRL fields, then the profiles' script keys."""
    values: dict[str, Any] = config.model_dump(mode="python", exclude_unset=True)
    result = config.check_result
    for view in result.profile_args.values():
        values.update({key: value for key, value in view.model_dump().items() if key in result.raw})
    return values


def _profile_script_class(config: GRPORunConfig, base: type) -> type:
    """TRL's GRPOScriptArguments, extended with the fields of each active profile's script keys."""
    profiles = config.check_result.profile_args
    if not profiles:
        return base
    specs: list[tuple[str, Any, Any]] = []
    for view in profiles.values():
        for key, value in view.model_dump().items():
            default = dataclasses.field(default_factory=_copier(value))
            specs.append((key, Any, default))
    title = "".join(part.capitalize() for part in "-".join(profiles).replace("_", "-").split("-"))
    return dataclasses.make_dataclass(f"{title}ScriptArguments", specs, bases=(base,))


def _copier(value: Any) -> Any:
    import copy

    return lambda: copy.deepcopy(value)
