"""The features a config uses (vLLM and its mode, PEFT, quantisation, Liger, flash-attn, DeepSpeed and its ZeRO
stage, resuming), as the doctor rules and the known-bad rows name them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .context import Context

# --- the config's features ----------------------------------------------------------------------------------------


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def vllm_mode(ctx: Context) -> str:
    mode = ctx.config.get("vllm_mode")
    if isinstance(mode, str) and mode:
        return mode
    from grpo_schema.versions.tables import surface

    try:
        fields = surface(ctx.file_release).fields
    except ValueError:
        return "colocate"
    if "vllm_mode" in fields:
        return str(fields["vllm_mode"].default or "server")
    return "server" if "vllm_server_host" in fields else "internal"


def deepspeed_config(ctx: Context) -> dict[str, Any] | None:
    """The config's DeepSpeed settings as a mapping (None: none, or a file that cannot be read here)."""
    ds = ctx.config.get("deepspeed")
    if isinstance(ds, dict):
        return ds
    if not isinstance(ds, str) or not ds.strip():
        return None
    text = ds.strip()
    try:
        if text.startswith("{"):
            data = json.loads(text)
        elif not ctx.local_files:
            return None
        else:
            path = Path(text)
            if not path.is_absolute() and ctx.config_path:
                beside = Path(ctx.config_path).parent / path
                path = beside if beside.exists() else path
            data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def deepspeed_stage(ctx: Context) -> int | None:
    """The ZeRO stage of the config's DeepSpeed setup (None: no DeepSpeed; 0: a config whose stage is unknown)."""
    launch = ctx.config.get("accelerate_config")
    if isinstance(launch, str) and launch.startswith("zero") and launch[4:].isdigit():
        return int(launch[4:])
    ds = ctx.config.get("deepspeed")
    if ds in (None, "", False):
        return None
    data: Any = ds
    if isinstance(ds, str):
        text = ds.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                return 0
        elif not ctx.local_files:
            return 0
        else:
            path = Path(text)
            if not path.is_absolute() and ctx.config_path:
                beside = Path(ctx.config_path).parent / path
                path = beside if beside.exists() else path
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return 0
    if isinstance(data, dict):
        stage = (
            (data.get("zero_optimization") or {}).get("stage")
            if isinstance(data.get("zero_optimization"), dict)
            else None
        )
        return stage if isinstance(stage, int) else 0
    return 0


def features(ctx: Context) -> set[str]:
    cfg = ctx.config
    out: set[str] = set()
    if truthy(cfg.get("use_vllm")):
        out.add("vllm")
        mode = vllm_mode(ctx)
        if mode == "server":
            out.add("vllm_server")
        elif mode == "colocate":
            out.add("vllm_colocate")
        if truthy(cfg.get("vllm_enable_sleep_mode")):
            out.add("vllm_sleep_mode")
    if truthy(cfg.get("use_peft")):
        out.add("peft")
    if truthy(cfg.get("load_in_4bit")) or truthy(cfg.get("load_in_8bit")):
        out.add("quantized")
    if truthy(cfg.get("use_liger_kernel")) or truthy(cfg.get("use_liger_loss")):
        out.add("liger")
    if cfg.get("attn_implementation") == "flash_attention_2":
        out.add("flash_attn")
    stage = deepspeed_stage(ctx)
    if stage is not None:
        out.add("deepspeed")
        if stage == 3:
            out.add("zero3")
    if cfg.get("resume_from_checkpoint") not in (None, False, "", "false", "False"):
        out.add("resume")
    return out
