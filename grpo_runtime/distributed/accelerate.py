"""How a run is spread over processes: DDP, FSDP or DeepSpeed ZeRO, decided from the config alone (no torch).

Two places in a config ask for sharding, as with `trl grpo`:
* the training arguments `deepspeed` (a JSON file path or a mapping) and `fsdp` / `fsdp_config`, which the
  HF trainer turns into accelerate plugins inside each process (`accelerator_plugins`);
* the `accelerate launch` keys a recipe carries in its file (`accelerate_config: zero3`, `use_deepspeed`,
  `zero_stage`, `use_fsdp`, `config_file`), which `trl grpo` forwards to the launcher (`launcher_flags`).
  `accelerate_config` names one of grpo_runtime's own bundled accelerate configs (accelerate_configs/), the
  equivalents of those `trl grpo` ships, or a file.

`REFUSALS` are the sharding requests grpo_runtime cannot run as written; each is a predicate over
(config, launch keys) and a message, checked before anything loads.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Callable

BUNDLED_DIR = Path(__file__).parent / "accelerate_configs"
# The launch keys that choose the distributed type; `launcher_flags` turns them into accelerate's flags.
SHARDING_LAUNCH_KEYS = frozenset({"accelerate_config", "config_file", "use_deepspeed", "zero_stage", "use_fsdp"})
LAUNCH_FLAGS = ("multi_gpu", "cpu", "same_network", "enable_cpu_affinity", "quiet")  # accelerate's on/off flags
BUNDLED = tuple(sorted(path.stem for path in BUNDLED_DIR.glob("*.yaml")))
HF_AUTO = "auto"


def deepspeed_installed() -> bool:
    return importlib.util.find_spec("deepspeed") is not None


# --- the `accelerate launch` keys of the file -------------------------------------------------------------------


def accelerate_config_path(name: str) -> Path | None:
    """A bundled name (zero3, fsdp2, ...) or a file; None when neither exists."""
    if name in BUNDLED:
        return BUNDLED_DIR / f"{name}.yaml"
    path = Path(name).expanduser()
    return path if path.is_file() else None


def accelerate_file(launch: dict[str, Any]) -> Path | None:
    name = launch.get("accelerate_config") or launch.get("config_file")
    return accelerate_config_path(str(name)) if name else None


def launch_mode(launch: dict[str, Any]) -> str | None:
    """The distributed type the file's launch keys ask for: DEEPSPEED, FSDP, MULTI_GPU, NO or None (not said)."""
    if launch.get("use_deepspeed") or launch.get("zero_stage") is not None:
        return "DEEPSPEED"
    if launch.get("use_fsdp"):
        return "FSDP"
    kind = accelerate_settings(launch).get("distributed_type")
    return str(kind).upper() if kind else None


def accelerate_settings(launch: dict[str, Any]) -> dict[str, Any]:
    """The accelerate config file the launch keys name, read ({} when none is named or it cannot be read)."""
    path = accelerate_file(launch)
    if path is None:
        return {}
    import yaml

    try:
        settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return settings if isinstance(settings, dict) else {}


def weights_sharded(config, launch: dict[str, Any]) -> bool:
    """FSDP or ZeRO-3, from the config's fsdp / deepspeed fields or the launch keys: every process holds a shard of
    each weight."""
    if (
        truthy(config.fsdp)
        or zero_stage(config) == 3
        or launch_mode(launch) == "FSDP"
        or str(launch.get("zero_stage")) == "3"
    ):
        return True
    deepspeed = accelerate_settings(launch).get("deepspeed_config") if launch_mode(launch) == "DEEPSPEED" else None
    return isinstance(deepspeed, dict) and str(deepspeed.get("zero_stage")) == "3"


def launcher_flags(launch: dict[str, Any], given: list[str]) -> list[str]:
    """`accelerate launch` flags for the file's launch keys; a flag the command line already gives wins."""
    flags: list[str] = []
    command_line = " ".join(given)
    path = accelerate_file(launch)
    if path is not None and "--config_file" not in command_line:
        flags += ["--config_file", str(path)]
    if launch_mode(launch) == "DEEPSPEED" and path is None and "--use_deepspeed" not in command_line:
        flags.append("--use_deepspeed")
        if launch.get("zero_stage") is not None and "--zero_stage" not in command_line:
            flags += ["--zero_stage", str(launch["zero_stage"])]
    if launch.get("use_fsdp") and path is None and "--use_fsdp" not in command_line:
        flags += ["--use_fsdp", "--fsdp_version", "2"]
    return flags


# --- the training arguments: fsdp / fsdp_config -----------------------------------------------------------------


def read_json_setting(value: Any, field: str) -> dict:
    """A `fsdp_config` / `deepspeed` value: a mapping, or a JSON file path. Raises ValueError with the reason."""
    if isinstance(value, dict):
        return dict(value)
    path = Path(str(value)).expanduser()
    if not path.is_file():
        raise ValueError(f"{field}: {str(value)!r} is not a file")
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{field}: {str(value)!r} is not a readable JSON file ({error})") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{field}: {str(value)!r} holds a JSON {type(loaded).__name__}, not an object")
    return loaded


def fsdp_settings(config) -> dict:
    """fsdp_config with the `fsdp_` prefixes dropped and the legacy `fsdp` option string folded in, as
    transformers 5 reads them (full_shard -> reshard_after_forward true, shard_grad_op -> false, offload)."""
    settings = read_json_setting(config.fsdp_config, "fsdp_config") if config.fsdp_config else {}
    settings = {key.removeprefix("fsdp_"): value for key, value in settings.items()}
    options = (
        config.fsdp.split() if isinstance(config.fsdp, str) else config.fsdp if isinstance(config.fsdp, list) else []
    )
    for option in options:
        if option == "full_shard":
            settings.setdefault("reshard_after_forward", True)
        elif option == "shard_grad_op":
            settings.setdefault("reshard_after_forward", False)
        elif option == "offload":
            settings.setdefault("cpu_offload", True)
    return settings


def truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on", "full_shard")


def fsdp_plugin_kwargs(config) -> dict:
    """Keyword arguments of accelerate's FullyShardedDataParallelPlugin for the config's FSDP settings. The plugin
    is always FSDP2 (torch's fully_shard); a `version: 1` request runs as FSDP2 (same sharding and numbers)."""
    settings = fsdp_settings(config)
    kwargs: dict[str, Any] = {
        "fsdp_version": 2,
        "reshard_after_forward": truthy(settings.get("reshard_after_forward", True)),
        "auto_wrap_policy": settings.get("auto_wrap_policy", "TRANSFORMER_BASED_WRAP"),
        "state_dict_type": settings.get("state_dict_type", "FULL_STATE_DICT"),
        "cpu_ram_efficient_loading": truthy(settings.get("cpu_ram_efficient_loading", False)),
    }
    if truthy(settings.get("cpu_offload", settings.get("offload_params", False))):
        kwargs["cpu_offload"] = True
    if "activation_checkpointing" in settings:
        kwargs["activation_checkpointing"] = truthy(settings["activation_checkpointing"])
    layers = settings.get("transformer_layer_cls_to_wrap")
    if layers and kwargs["auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP":
        kwargs["transformer_cls_names_to_wrap"] = [layers] if isinstance(layers, str) else list(layers)
    if settings.get("min_num_params") and kwargs["auto_wrap_policy"] == "SIZE_BASED_WRAP":
        kwargs["min_num_params"] = int(settings["min_num_params"])
    return kwargs


def fsdp_version_requested(config) -> int:
    settings = fsdp_settings(config) if config.fsdp_config else {}
    return int(settings.get("version", 2))


# --- the training arguments: deepspeed --------------------------------------------------------------------------


def deepspeed_config(config, plan, world_size: int) -> dict:
    """The config's `deepspeed` settings with their "auto" values filled from the run config."""
    return fill_deepspeed_autos(read_json_setting(config.deepspeed, "deepspeed"), config, plan, world_size)


def fill_deepspeed_autos(settings: dict, config, plan, world_size: int) -> dict:
    """Fill every batch, accumulation, clipping and precision "auto" from the run config, as the HF trainer does
    (in place; also returned). Gradient accumulation is the run's: the loop tells DeepSpeed where each optimizer
    step ends and scales the loss itself. A value written out that disagrees with the run is an error."""
    micro = plan.per_device_train_batch_size
    accumulation = plan.gradient_accumulation_steps
    values = {
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": accumulation,
        "train_batch_size": micro * accumulation * world_size,
        "gradient_clipping": config.max_grad_norm if config.max_grad_norm > 0 else 0.0,
    }
    for key, value in values.items():
        given = settings.get(key, HF_AUTO)
        if given in (HF_AUTO, None):
            settings[key] = value
        elif key != "gradient_clipping" and int(given) != value:
            raise ValueError(
                f"deepspeed: {key} is {given} but this run's is {value} (per_device_train_batch_size "
                f"{micro}, gradient_accumulation_steps {accumulation}, {world_size} processes); set "
                f'it to "auto"'
            )
    from grpo_runtime.distributed.precision import mixed_precision

    precision = mixed_precision(config)
    for key, on in (("bf16", precision == "bf16"), ("fp16", precision == "fp16")):
        section = settings.get(key)
        if isinstance(section, dict) and section.get("enabled", HF_AUTO) == HF_AUTO:
            section["enabled"] = on
        elif section is None and on:
            settings[key] = {"enabled": True}
    settings.setdefault("zero_optimization", {}).setdefault("stage", 0)
    return settings


def zero_stage(config) -> int | None:
    if not config.deepspeed:
        return None
    try:
        return int(read_json_setting(config.deepspeed, "deepspeed").get("zero_optimization", {}).get("stage", 0))
    except (ValueError, TypeError, AttributeError):
        return None


# --- what cannot run as written ---------------------------------------------------------------------------------


def _deepspeed_unreadable(config, launch) -> str | None:
    if not config.deepspeed:
        return None
    try:
        settings = read_json_setting(config.deepspeed, "deepspeed")
    except ValueError as error:
        return f"{error}; give the path of a DeepSpeed JSON config (or the settings as a mapping)"
    own = [key for key in ("optimizer", "scheduler") if key in settings]
    if own:
        return (
            f"deepspeed: the DeepSpeed config defines its own {' and '.join(own)}; grpo_runtime builds them "
            f"from the run config: remove {'that section' if len(own) == 1 else 'those sections'} and set optim / "
            "lr_scheduler_type instead"
        )
    for key, field in (
        ("train_micro_batch_size_per_gpu", "per_device_train_batch_size"),
        ("gradient_accumulation_steps", "gradient_accumulation_steps"),
    ):
        given = settings.get(key, HF_AUTO)
        if given not in (HF_AUTO, None) and str(given) != str(getattr(config, field)):
            return (
                f"deepspeed: {key} is {given} but the run's {field} is {getattr(config, field)}; set it to "
                '"auto" (or make them equal)'
            )
    return None


def _deepspeed_missing(config, launch) -> str | None:
    wanted = bool(config.deepspeed) or launch_mode(launch) == "DEEPSPEED"
    if wanted and not deepspeed_installed():
        return (
            "DeepSpeed is requested (deepspeed / use_deepspeed / zero_stage / accelerate_config) but the "
            "deepspeed package is not installed: pip install 'grpo-config[deepspeed]'"
        )
    return None


def _accelerate_file_missing(config, launch) -> str | None:
    for key in ("accelerate_config", "config_file"):
        name = launch.get(key)
        if name and accelerate_config_path(str(name)) is None:
            return f"{key}: {str(name)!r} is neither a bundled accelerate config ({', '.join(BUNDLED)}) nor a file"
    return None


def _fsdp_unreadable(config, launch) -> str | None:
    if not config.fsdp_config or isinstance(config.fsdp_config, dict):
        return None
    try:
        read_json_setting(config.fsdp_config, "fsdp_config")
    except ValueError as error:
        return f"{error}; give the path of a JSON file (or the settings as a mapping)"
    return None


# (predicate(config, launch keys) -> reason or None)
REFUSALS: list[Callable[[Any, dict], str | None]] = [
    _deepspeed_unreadable,
    _deepspeed_missing,
    _accelerate_file_missing,
    _fsdp_unreadable,
]


def refusals(config, launch: dict[str, Any] | None = None) -> list[str]:
    """The reasons grpo_runtime cannot run this config's distributed settings as written (empty: it can)."""
    launch = launch or {}
    return [reason for check in REFUSALS if (reason := check(config, launch))]


def sharding_warnings(config, launch: dict[str, Any], world_size: int) -> list[str]:
    """Settings that are honoured only partly in this launch (printed, the run goes ahead)."""
    found = []
    if world_size == 1 and (config.deepspeed or launch_mode(launch) in ("DEEPSPEED", "FSDP")):
        found.append(
            "sharding (deepspeed / fsdp / accelerate_config) needs several processes; this one-process "
            "run holds the whole model and optimizer, unsharded. Use `grpo launch FILE --num-processes N`"
        )
    if config.fsdp and fsdp_version_requested(config) == 1:
        found.append(
            "fsdp_config.version 1 (FSDP1, deprecated by transformers) runs as FSDP2 in grpo_runtime: the "
            "same sharding and numbers"
        )
    return found


def prebuild_deepspeed_ops(cpu_adam: bool = False) -> None:
    """DeepSpeed compiles its shared-memory communication op (CPU processes) with g++ the first time it starts;
    several processes compiling it at once can wreck each other's build. The launcher builds it once, before
    starting them (a no-op when torch's extension cache already holds it; scripts/setup.sh builds it too). With
    `cpu_adam`, also the optimizer a ZeRO offload to the CPU steps with (scripts/setup.sh: a first build inside a
    run that is stopped midway leaves a lock every later run waits on)."""
    if not deepspeed_installed():
        return
    import deepspeed.ops  # fills __compatible_ops__
    from deepspeed.accelerator import get_accelerator

    for name in ("ShareMemCommBuilder", *(("CPUAdamBuilder",) if cpu_adam else ())):
        builder = get_accelerator().create_op_builder(name)
        if builder is None or not deepspeed.ops.__compatible_ops__.get(builder.NAME, False):
            continue
        remove_stale_build_lock(builder.NAME)
        builder.load(verbose=False)


def flag_value(flags: list[str], name: str) -> str | None:
    """The value a launcher flag is given (`--name VALUE` or `--name=VALUE`), None when it is not given."""
    for i, item in enumerate(flags):
        if item == name and i + 1 < len(flags):
            return flags[i + 1]
        if item.startswith(name + "="):
            return item.split("=", 1)[1]
    return None


def offloads_optimizer(config, flags: list[str]) -> bool:
    """Whether a DeepSpeed run steps its optimizer on the CPU (ZeRO's offload_optimizer to cpu or nvme), said by the
    config's `deepspeed`, by an accelerate config file or DeepSpeed JSON the launcher flags name, or by the
    --offload_optimizer_device flag. DeepSpeed then compiles its CPU Adam in every process at start."""

    def json_device(value) -> str | None:
        try:
            zero = read_json_setting(value, "deepspeed").get("zero_optimization") or {}
        except ValueError:
            return None
        offload = zero.get("offload_optimizer") if isinstance(zero, dict) else None
        return offload.get("device") if isinstance(offload, dict) else None

    file_settings = accelerate_settings({"config_file": flag_value(flags, "--config_file")}).get("deepspeed_config")
    file_settings = file_settings if isinstance(file_settings, dict) else {}
    devices = [
        json_device(config.deepspeed) if config.deepspeed else None,
        flag_value(flags, "--offload_optimizer_device"),
        file_settings.get("offload_optimizer_device"),
        json_device(file_settings["deepspeed_config_file"]) if "deepspeed_config_file" in file_settings else None,
        json_device(named) if (named := flag_value(flags, "--deepspeed_config_file")) else None,
    ]
    return any(str(device).lower() in ("cpu", "nvme") for device in devices if device)


def remove_stale_build_lock(name: str, older_than_s: float = 3600) -> None:
    """A build killed midway leaves torch's `lock` file behind, and every later build waits on it forever."""
    import time

    from torch.utils.cpp_extension import _get_build_directory

    lock = Path(_get_build_directory(name, verbose=False)) / "lock"
    if lock.exists() and time.time() - lock.stat().st_mtime > older_than_s:
        lock.unlink(missing_ok=True)


def accelerator_settings(config) -> dict:
    """accelerator_config as a mapping: written inline, or the path of a JSON file (as TrainingArguments reads
    it). An unreadable file counts as empty here; loading it for the run reports the error."""
    value = config.accelerator_config
    if isinstance(value, str):
        import json

        try:
            with open(value, encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return {}
    return value if isinstance(value, dict) else {}
