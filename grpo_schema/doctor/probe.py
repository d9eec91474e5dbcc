"""An interpreter's environment read by a small standard-library script (`PROBE`) that lists its distributions' metadata: run in this process (`current`) or by another interpreter in isolated mode (`from_python`). Nothing of
the environment is imported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .packages import Environment, EnvironmentError_, Package, canonical

# Import names of the key packages: a folder with one of these names on the path but no metadata for the
# distribution is "installed without metadata" (copied in, or a broken install), which no version check can judge.
IMPORT_NAMES = {
    "trl": "trl",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "torch": "torch",
    "vllm": "vllm",
    "deepspeed": "deepspeed",
    "peft": "peft",
    "bitsandbytes": "bitsandbytes",
    "flash-attn": "flash_attn",
    "liger-kernel": "liger_kernel",
    "datasets": "datasets",
}

PROBE_TIMEOUT_S = 60

# --- the probe (runs in the target interpreter; standard library only) ---------------------------------------------

PROBE = r"""
import json, os, platform, sys
try:
    from importlib import metadata
except ImportError:
    metadata = None
IMPORT_NAMES = %(import_names)s
def probe():
    out = {"python": platform.python_version(), "sys_path": [p for p in sys.path if p], "dists": [],
           "bare": [], "libc": list(platform.libc_ver())}
    if metadata is None:
        out["error"] = "this interpreter has no importlib.metadata (Python 3.8 or newer is needed)"
        return out
    seen = set()
    for dist in metadata.distributions():
        try:
            meta = dist.metadata
            name = meta["Name"] if meta is not None else None
        except Exception:
            name = None
        path = str(getattr(dist, "_path", "") or "")
        if not name:
            out["dists"].append({"name": None, "path": path})
            continue
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in seen:  # the first on sys.path wins, as for imports
            continue
        seen.add(key)
        entry = {"name": name, "version": dist.version, "path": path}
        try:
            text = dist.read_text("direct_url.json")
            if text:
                entry["url"] = json.loads(text).get("url")
        except Exception:
            pass
        try:
            entry["mtime"] = os.stat(path).st_mtime if path else None
        except OSError:
            entry["mtime"] = None
        try:
            entry["console_scripts"] = sorted(ep.name for ep in dist.entry_points if ep.group == "console_scripts")
        except Exception:
            entry["console_scripts"] = []
        out["dists"].append(entry)
    import shutil
    out["compiler"] = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    ops = []
    roots = [os.path.join(p, "deepspeed", "ops") for p in sys.path if p]
    roots.append(os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                       "torch_extensions"))
    for root in roots:
        if not os.path.isdir(root):
            continue
        for folder, _dirs, files in os.walk(root):
            if folder.count(os.sep) - root.count(os.sep) > 3:
                continue
            ops += [f.split(".")[0] for f in files if f.endswith(".so")]
    out["ds_ops"] = sorted(set(ops))
    for dist_name, import_name in IMPORT_NAMES.items():
        if dist_name in seen:
            continue
        for entry in sys.path:
            if entry and (os.path.isdir(os.path.join(entry, import_name)) or
                          os.path.isfile(os.path.join(entry, import_name + ".py"))):
                out["bare"].append({"name": dist_name, "path": os.path.join(entry, import_name)})
                break
    return out
if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe()))
""" % {"import_names": repr(IMPORT_NAMES)}


def _from_probe(data: dict[str, Any], source: str, origin: str) -> Environment:
    env = Environment(
        source=source,
        origin=origin,
        python_version=data.get("python"),
        sys_path=list(data.get("sys_path") or []),
        compiler=data.get("compiler"),
        ds_ops=tuple(data["ds_ops"]) if isinstance(data.get("ds_ops"), list) else None,
    )
    if data.get("error"):
        raise EnvironmentError_(f"{origin}: {data['error']}")
    _read_distributions(env, data.get("dists") or [])
    _read_bare(env, data.get("bare") or [])
    return env


def _read_distributions(env: Environment, dists: list[dict[str, Any]]) -> None:
    """The probe's installed distributions into env.packages; unreadable metadata into env.problems."""
    for entry in dists:
        if not entry.get("name"):
            env.problems.append(
                (
                    None,
                    entry.get("path") or "?",
                    "a distribution folder without readable metadata (no Name in METADATA): reinstall that package",
                )
            )
            continue
        name = canonical(entry["name"])
        version = entry.get("version")
        if not version:
            env.problems.append(
                (
                    None,
                    entry.get("path") or name,
                    f"{name} has metadata without a Version: no check can judge it; reinstall it",
                )
            )
        env.packages[name] = Package(
            name,
            version or None,
            url=entry.get("url"),
            extra={
                "mtime": entry.get("mtime"),
                "path": entry.get("path"),
                "console_scripts": tuple(entry.get("console_scripts") or ()),
            },
        )


def _read_bare(env: Environment, bare: list[dict[str, Any]]) -> None:
    """Packages on the path without metadata: a problem each, since no version check can judge them."""
    for entry in bare:
        env.problems.append(
            (
                None,
                entry["path"],
                f"{entry['name']} is on the path without metadata (no "
                f"{entry['name']}-*.dist-info): it was copied in or half-removed; no version check can "
                f"judge it; reinstall it with pip",
            )
        )


def current() -> Environment:
    """This interpreter's environment (what `grpo doctor` sees without --python/--freeze/--requirements)."""
    import sys

    namespace: dict[str, Any] = {"__name__": "grpo_doctor_probe"}
    exec(compile(PROBE, "<grpo doctor probe>", "exec"), namespace)
    return _from_probe(namespace["probe"](), "current", sys.executable)


def from_python(path: str) -> Environment:
    """Another interpreter's environment: it runs the probe (isolated mode: no user site, no PYTHON* variables,
    the current folder not on the path), which reads metadata files only."""
    exe = Path(path)
    if exe.is_dir():  # a venv folder: its interpreter
        for candidate in (exe / "bin" / "python", exe / "Scripts" / "python.exe"):
            if candidate.exists():
                exe = candidate
                break
        else:
            raise EnvironmentError_(
                f"--python {path}: a folder without bin/python (give the interpreter itself, e.g. {path}/bin/python)"
            )
    if not exe.exists():
        raise EnvironmentError_(f"--python {path}: no such interpreter")
    if not os.access(exe, os.X_OK):
        raise EnvironmentError_(f"--python {path}: not an executable file")
    try:
        done = subprocess.run(
            [str(exe), "-I", "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentError_(f"--python {path}: the interpreter did not answer within {PROBE_TIMEOUT_S} s")
    except OSError as exc:
        raise EnvironmentError_(f"--python {path}: cannot run it ({exc.strerror or exc})")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentError_(
            f"--python {path}: the interpreter failed to read its packages ({last}); is it Python 3.8 or newer?"
        )
    try:
        data = json.loads(done.stdout)
    except ValueError:
        raise EnvironmentError_(f"--python {path}: the interpreter printed something other than the package list")
    return _from_probe(data, "python", str(path))
