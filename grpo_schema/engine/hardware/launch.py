"""What the launch says about sharding: the accelerate config file or DeepSpeed JSON a config names, read as data.

Sources, the first that says wins for each fact (the plan's text names it):
- the command line (`grpo plan --strategy`, `--offload optimizer|params|both|none`) and the `hardware:` section;
- the config's `deepspeed` field (a mapping, a JSON object string or a JSON file path: `zero_optimization.stage`,
  `offload_optimizer.device`, `offload_param.device`, `reduce_bucket_size`, `stage3_max_live_parameters`,
  `bf16.enabled` / `fp16.enabled`);
- the accelerate config file the launch names (`accelerate_config:`, `trl grpo`'s key, a path or one of the names
  TRL bundles; `config_file:`): `distributed_type`, `deepspeed_config` (`zero_stage`, `offload_optimizer_device`,
  `offload_param_device`, `deepspeed_config_file`, itself read as above), `fsdp_config` (`fsdp_offload_params`,
  `fsdp_sharding_strategy`, `fsdp_reshard_after_forward`), `mixed_precision`;
- accelerate launch keys written in the file itself (`zero_stage`, `offload_optimizer_device`, ...);
- the config's `fsdp` / `fsdp_config` fields.

accelerate builds a DeepSpeed config without bucket sizes from an accelerate file alone, so DeepSpeed's defaults
apply (reduce_bucket_size 5e8, stage3_max_live_parameters 1e9); a DeepSpeed JSON's "auto" reduce_bucket_size is
filled by transformers with hidden_size squared. Files are read only where the caller allows local files (never
for the service, which reads no path a client names); a file that cannot be read is named in the plan's text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 1 << 20
OFFLOAD_CHOICES = ("none", "optimizer", "params", "both")
# The accelerate configs TRL 1.16 bundles (trl/accelerate_configs/NAME.yaml), as the facts they state: all
# mixed_precision bf16, DeepSpeed ones with both offloads "none", fsdp2 with fsdp_offload_params false.
BUNDLED = {
    "zero1": ("zero1", "DEEPSPEED zero_stage 1"),
    "zero2": ("zero2", "DEEPSPEED zero_stage 2"),
    "zero3": ("zero3", "DEEPSPEED zero_stage 3"),
    "fsdp1": ("fsdp", "FSDP version 1, FULL_SHARD"),
    "fsdp2": ("fsdp", "FSDP version 2, reshard_after_forward"),
    "multi_gpu": ("ddp", "MULTI_GPU"),
    "single_gpu": ("ddp", "NO (one process)"),
}


@dataclass
class LaunchFacts:
    strategy: str | None = None
    offload_optimizer: bool | None = None
    offload_params: bool | None = None
    reduce_bucket_size: int | None = None  # elements; 0: "auto" (hidden_size squared)
    max_live_parameters: int | None = None
    mixed_precision: str | None = None  # "bf16" | "fp16" | "no"
    sources: dict[str, str] = field(default_factory=dict)  # fact -> where it was read
    problems: list[str] = field(default_factory=list)  # files named but not read, and why

    def set(self, name: str, value: Any, source: str) -> None:
        """Keep the first source that states a fact."""
        if value is not None and getattr(self, name) is None:
            setattr(self, name, value)
            self.sources[name] = source


def _device(value: Any) -> bool | None:
    if value is None:
        return None
    return str(value).lower() in ("cpu", "nvme")


def _number(value: Any) -> int | None:
    if value == "auto":
        return 0
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _read(path_text: str, base: Path | None, facts: LaunchFacts, what: str) -> Any:
    import yaml

    candidates = [Path(path_text).expanduser()]
    if base is not None and not candidates[0].is_absolute():
        candidates.append(base / path_text)
    for path in candidates:
        try:
            if path.is_file():
                if path.stat().st_size > MAX_FILE_BYTES:
                    facts.problems.append(f"{what} {path_text}: larger than 1 MiB, not read")
                    return None
                text = path.read_text(encoding="utf-8")
                return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, UnicodeDecodeError, yaml.YAMLError) as exc:
            facts.problems.append(f"{what} {path_text}: not read ({exc.__class__.__name__})")
            return None
    facts.problems.append(f"{what} {path_text}: no such file here")
    return None


def read_deepspeed(value: Any, facts: LaunchFacts, source: str, base: Path | None, local_files: bool) -> None:
    """A DeepSpeed config: a mapping, a JSON object string or a JSON file path."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            facts.problems.append(f"{source}: not a JSON object")
            return
    if isinstance(value, str):
        if not local_files:
            return
        value = _read(value, base, facts, source)
    if not isinstance(value, dict):
        return
    zero = value.get("zero_optimization") if isinstance(value.get("zero_optimization"), dict) else {}
    stage = _number(zero.get("stage"))
    if stage is not None and stage > 0:
        facts.set("strategy", f"zero{stage}", f"{source}: zero_optimization.stage {stage}")
    elif stage == 0 and "stage" in zero and zero["stage"] != "auto":
        facts.set("strategy", "ddp", f"{source}: zero_optimization.stage 0")
    for key, name in (("offload_optimizer", "offload_optimizer"), ("offload_param", "offload_params")):
        sub = zero.get(key)
        if isinstance(sub, dict) and sub.get("device") is not None:
            facts.set(name, _device(sub["device"]), f"{source}: zero_optimization.{key}.device {sub['device']}")
    if "reduce_bucket_size" in zero:
        facts.set(
            "reduce_bucket_size",
            _number(zero["reduce_bucket_size"]),
            f"{source}: reduce_bucket_size {zero['reduce_bucket_size']}",
        )
    if "stage3_max_live_parameters" in zero:
        facts.set(
            "max_live_parameters",
            _number(zero["stage3_max_live_parameters"]),
            f"{source}: stage3_max_live_parameters {zero['stage3_max_live_parameters']}",
        )
    for precision in ("bf16", "fp16"):
        sub = value.get(precision)
        if isinstance(sub, dict) and sub.get("enabled") is True:
            facts.set("mixed_precision", precision, f"{source}: {precision}.enabled")


def read_accelerate(path_text: str, facts: LaunchFacts, source: str, base: Path | None, local_files: bool) -> None:
    """An accelerate config file (or a name TRL bundles)."""
    name = path_text.strip()
    if name in BUNDLED and not name.endswith((".yaml", ".yml", ".json")):
        _bundled_accelerate(name, facts, source)
        return
    if not local_files:
        return
    data = _read(name, base, facts, source)
    if not isinstance(data, dict):
        return
    where = f"{source} {name}"
    kind = str(data.get("distributed_type") or "").upper()
    ds = data.get("deepspeed_config") if isinstance(data.get("deepspeed_config"), dict) else {}
    fsdp = data.get("fsdp_config") if isinstance(data.get("fsdp_config"), dict) else {}
    if kind == "DEEPSPEED" or ds:
        _accelerate_deepspeed(ds, name, where, facts, local_files)
    elif kind == "FSDP" or fsdp:
        _accelerate_fsdp(fsdp, where, facts)
    elif kind in ("MULTI_GPU", "NO", "MULTI_CPU"):
        facts.set("strategy", "ddp", f"{where}: distributed_type {kind}")
    precision = data.get("mixed_precision")
    if precision in ("bf16", "fp16", "no"):
        facts.set("mixed_precision", precision, f"{where}: mixed_precision {precision}")


def _bundled_accelerate(name: str, facts: LaunchFacts, source: str) -> None:
    """One of the accelerate configs TRL bundles, named without a suffix: its strategy, no offload, bf16."""
    strategy, says = BUNDLED[name]
    where = f"{source} {name} (TRL's bundled accelerate config: {says})"
    facts.set("strategy", strategy, where)
    if strategy != "ddp":
        facts.set("offload_optimizer", False, where)
        facts.set("offload_params", False, where)
    facts.set("mixed_precision", "bf16", where)


def _accelerate_deepspeed(ds: dict, name: str, where: str, facts: LaunchFacts, local_files: bool) -> None:
    """An accelerate config's deepspeed_config: its own DeepSpeed file first, then the stage and offloads it sets."""
    if ds.get("deepspeed_config_file"):
        file_base = Path(name).expanduser().parent
        read_deepspeed(
            str(ds["deepspeed_config_file"]), facts, f"{where}: deepspeed_config_file", file_base, local_files
        )
    stage = _number(ds.get("zero_stage"))
    if stage is not None:
        facts.set(
            "strategy", f"zero{stage}" if stage else "ddp", f"{where}: distributed_type DEEPSPEED, zero_stage {stage}"
        )
    for key, fact in (("offload_optimizer_device", "offload_optimizer"), ("offload_param_device", "offload_params")):
        if ds.get(key) is not None:
            facts.set(fact, _device(ds[key]), f"{where}: {key} {ds[key]}")


def _accelerate_fsdp(fsdp: dict, where: str, facts: LaunchFacts) -> None:
    """An accelerate config's fsdp_config: full or gradient/optimizer sharding, and the parameters' offload."""
    strategy = str(fsdp.get("fsdp_sharding_strategy") or "").upper()
    grad_op = "SHARD_GRAD_OP" in strategy or strategy == "2" or fsdp.get("fsdp_reshard_after_forward") is False
    facts.set(
        "strategy",
        "fsdp_grad_op" if grad_op else "fsdp",
        f"{where}: distributed_type FSDP"
        + (" (gradients and optimizer sharded, weights kept after the forward)" if grad_op else ""),
    )
    if "fsdp_offload_params" in fsdp:
        facts.set(
            "offload_params",
            bool(fsdp["fsdp_offload_params"]),
            f"{where}: fsdp_offload_params {fsdp['fsdp_offload_params']}",
        )
        facts.set(
            "offload_optimizer",
            bool(fsdp["fsdp_offload_params"]),
            f"{where}: fsdp_offload_params {fsdp['fsdp_offload_params']} (FSDP offloads the optimizer "
            "with the parameters)",
        )


def read_launch(
    result: Any, section: dict, *, strategy: str | None = None, offload: str | None = None, local_files: bool = True
) -> LaunchFacts:
    """Every sharding fact the command line, the hardware: section, the config and the files it names state."""
    facts = LaunchFacts()
    if strategy:
        facts.set("strategy", strategy, "--strategy")
    if offload in OFFLOAD_CHOICES:
        facts.set("offload_optimizer", offload in ("optimizer", "both"), f"--offload {offload}")
        facts.set("offload_params", offload in ("params", "both"), f"--offload {offload}")
    if section.get("strategy"):
        facts.set("strategy", str(section["strategy"]), "hardware: strategy")
    for key in ("offload_optimizer", "offload_params"):
        if section.get(key) is not None:
            facts.set(key, bool(section[key]), f"hardware: {key}")
    config, launch = result.config, getattr(result, "launch", {}) or {}
    base = Path(result.path).expanduser().parent if getattr(result, "path", None) else None
    deepspeed = getattr(config, "deepspeed", None)
    if deepspeed is not None:
        read_deepspeed(deepspeed, facts, "deepspeed", base, local_files)
    for key in ("accelerate_config", "config_file"):
        if isinstance(launch.get(key), str) and launch[key].strip():
            read_accelerate(launch[key], facts, key, base, local_files)
    if isinstance(launch.get("zero_stage"), int):
        stage = launch["zero_stage"]
        facts.set("strategy", f"zero{stage}" if stage else "ddp", f"zero_stage {stage} (launch key)")
    for key, fact in (("offload_optimizer_device", "offload_optimizer"), ("offload_param_device", "offload_params")):
        if launch.get(key) is not None:
            facts.set(fact, _device(launch[key]), f"{key} {launch[key]} (launch key)")
    if launch.get("fsdp_offload_params") is not None:
        facts.set("offload_params", bool(launch["fsdp_offload_params"]), "fsdp_offload_params (launch key)")
    fsdp_config = getattr(config, "fsdp_config", None)
    if isinstance(fsdp_config, dict):
        offload = fsdp_config.get("offload_params", fsdp_config.get("fsdp_offload_params"))
        if offload is not None:
            facts.set("offload_params", bool(offload), f"fsdp_config: offload_params {offload}")
    fsdp = getattr(config, "fsdp", None)
    text = " ".join(fsdp) if isinstance(fsdp, list) else str(fsdp or "")
    if "shard_grad_op" in text:
        facts.set("strategy", "fsdp_grad_op", f"fsdp: {text}")
    elif "full_shard" in text or "hybrid_shard" in text or fsdp is True or launch.get("use_fsdp"):
        facts.set("strategy", "fsdp", f"fsdp: {text or True}")
    if "offload" in text:
        facts.set("offload_params", True, f"fsdp: {text}")
    if launch.get("mixed_precision") in ("bf16", "fp16", "no"):
        facts.set("mixed_precision", launch["mixed_precision"], "mixed_precision (launch key)")
    return facts
