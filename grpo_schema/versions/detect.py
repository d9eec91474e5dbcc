"""Which TRL release a config is meant for: a flag, the `trl` installed beside the interpreter, a pin in the
config's repository, or the default (1.16). Reads metadata and text files only; never imports trl."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, NamedTuple, Sequence

if TYPE_CHECKING:
    from .tables import Version


def _tables():
    """The release tables, loaded only when a flag or a pin needs them (an installed trl does not)."""
    from . import tables

    return tables


DEFAULT = "1.16.0"

# Why a release was the one judged against, in the words every text output uses (detection's sources and the
# check's own).
RELEASE_SOURCES = {
    "flag": "--trl-version",
    "installed": "the trl installed beside this Python",
    "environment": "the trl installed in the environment",
    "requirements": "the trl pinned in the repository's requirements",
    "comment": "the file's `# grpo: --trl-version` comment",
    "editor settings": "the editor's settings",
    "service settings": "the service's --trl-version",
    "context": "the validation context",
    "form": "the version picked in the form",
    "default": "grpo-config's default release",
}


def source_words(source: str) -> str:
    """'flag' -> '--trl-version': where a judged release came from, as a reader says it."""
    return RELEASE_SOURCES.get(source, source)


PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
ROOT_MARKERS = (".git", ".hg")


class Detected(NamedTuple):
    version: str
    source: str  # flag | installed | requirements | default
    file: str | None  # the METADATA or requirements/pyproject/setup file it came from


_DIST_INFO = re.compile(r"^trl-(?P<version>[^-]+)\.(?:dist|egg)-info$", re.I)


def installed_version(search_path: Sequence[str] | None = None) -> tuple[str, str] | None:
    """(version, METADATA path) of the `trl` distribution on `search_path` (default: sys.path), or None.

    Found by its `trl-X.Y.Z.dist-info` folder, as importlib.metadata finds it, without reading every other
    distribution's metadata (that costs `grpo validate` some 50 ms at start)."""
    for entry in list(sys.path if search_path is None else search_path):
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing folder
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                metadata = os.path.join(entry or ".", name, "METADATA" if name.endswith("dist-info") else "PKG-INFO")
                return _metadata_version(metadata) or match["version"], metadata
    return None


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break  # the headers end at the first blank line
    except OSError:
        pass
    return None


# --- requirement specifiers ---------------------------------------------------------------------------------------

# Compiled when a pin is read (not for an installed trl: `grpo validate` starts without them).
_PATTERNS = {
    "name": r"""(?<![\w.\-])trl(?P<extras>\s*\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?=?\s*[\w.*+!\-]+\s*,?\s*)*)(?=$|[\s;"',#\]\)])""",
    "clause": r"(===|==|!=|~=|>=|<=|>|<)\s*([\w.*+!\-]+)",
    "poetry": r"""^\s*trl\s*=\s*(?:"(?P<plain>[^"]*)"|\{[^}]*version\s*=\s*"(?P<table>[^"]*)")""",
}
_FLAGS = {"name": re.I, "clause": 0, "poetry": re.I | re.M}


def _pattern(name: str) -> re.Pattern:
    return re.compile(_PATTERNS[name], _FLAGS[name])  # re caches compiled patterns


def _satisfies(v: Version, op: str, target: str) -> bool:
    if target.endswith(".*"):
        prefix = tuple(int(p) for p in target[:-2].split("."))
        same = v[: len(prefix)] == prefix
        return same if op == "==" else (not same if op == "!=" else False)
    t = _tables().parse_release(target)
    if op in ("==", "==="):
        return v == t
    if op == "!=":
        return v != t
    if op == ">=":
        return v >= t
    if op == "<=":
        return v <= t
    if op == ">":
        return v > t
    if op == "<":
        return v < t
    if op == "~=":  # compatible release: >= t and same prefix but the last given part
        parts = target.split(".")
        prefix = tuple(int(p) for p in parts[:-1])
        return v >= t and v[: len(prefix)] == prefix
    return False


def resolve_specifier(spec: str) -> str | None:
    """The release a specifier pins: `==X` gives X itself; a range gives the newest covered release inside it."""
    clauses = _pattern("clause").findall(spec)
    if not clauses:
        return None
    exact = [t for op, t in clauses if op in ("==", "===") and not t.endswith(".*")]
    if len(clauses) == 1 and exact:
        try:
            _tables().parse_release(exact[0])
        except ValueError:
            return None
        return exact[0]
    try:
        inside = [
            r for r in _tables().releases() if all(_satisfies(_tables().parse_release(r), op, t) for op, t in clauses)
        ]
    except ValueError:
        return None
    return inside[-1] if inside else None


def pins_in_text(text: str, kind: str) -> list[str]:
    """The `trl` specifiers written in a requirements file, pyproject.toml, setup.py or setup.cfg, or the release a
    uv.lock / poetry.lock resolved (as `==X`)."""
    found: list[str] = []
    if kind == "lock":
        return [f"=={m.group('version')}" for m in _LOCKED.finditer(text)]
    if kind == "requirements":
        for line in text.splitlines():
            line = line.split(" #", 1)[0].strip()
            if not line or line.startswith(("#", "-")):
                continue
            m = _pattern("name").match(line)
            if m and m.group("spec").strip():
                found.append(m.group("spec").strip())
        return found
    if kind == "pyproject":
        for m in _pattern("poetry").finditer(text):
            spec = (m.group("plain") or m.group("table") or "").strip()
            if spec and spec[0].isdigit():
                spec = "==" + spec
            elif spec.startswith("^"):  # poetry caret: same major (same minor below 1.0)
                base = _tables().parse_release(spec[1:])
                upper = f"{base[0] + 1}.0.0" if base[0] else f"0.{base[1] + 1}.0"
                spec = f">={spec[1:]},<{upper}"
            if spec:
                found.append(spec)
    for m in re.finditer(r"""["']\s*(trl\b[^"']*)["']""", text, re.I):
        inner = _pattern("name").match(m.group(1).strip())
        if inner and inner.group("spec").strip():
            found.append(inner.group("spec").strip())
    if kind == "setup.cfg":
        for line in text.splitlines():
            inner = _pattern("name").match(line.strip())
            if inner and inner.group("spec").strip():
                found.append(inner.group("spec").strip())
    return found


_LOCKED = re.compile(r'^\[\[package\]\]\s*\nname\s*=\s*"trl"\s*\nversion\s*=\s*"(?P<version>[^"]+)"', re.M)


def _candidates(folder: Path) -> Iterable[tuple[Path, str]]:
    for name in ("uv.lock", "poetry.lock"):  # what the repository's environment resolved: the exact release
        yield folder / name, "lock"
    for path in sorted(folder.glob("requirements*.txt")):
        yield path, "requirements"
    for name in PIN_FILES:
        kind = {"pyproject.toml": "pyproject", "setup.py": "setup.py", "setup.cfg": "setup.cfg"}[name]
        yield folder / name, kind


def pinned_version(config_path: str | os.PathLike[str]) -> tuple[str, str] | None:
    """(version, file) from the first `trl` pin found in the config's folder or a parent, up to the repository
    root (a folder holding .git), or None."""
    start = Path(config_path).resolve()
    folder = start if start.is_dir() else start.parent
    while True:
        for path, kind in _candidates(folder):
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for spec in pins_in_text(text, kind):
                version = resolve_specifier(spec)
                if version is not None:
                    return version, str(path)
        if any((folder / marker).exists() for marker in ROOT_MARKERS) or folder.parent == folder:
            return None
        folder = folder.parent


def default_version(
    config_path: str | os.PathLike[str] | None = None, flag: str | None = None, search_path: Sequence[str] | None = None
) -> Detected:
    """The TRL release to judge a config against, and where that came from.

    In order: `flag` (e.g. `--trl 0.19`); the `trl` distribution installed on `search_path` (default: this
    interpreter's sys.path, read from its metadata); a pin in requirements*.txt / pyproject.toml / setup.py /
    setup.cfg in the config's folder or its parents up to the repository root; else 1.16.0.
    """
    if flag is not None:
        _tables().parse_version(flag)  # VersionError for text that is no version or too old a release
        return Detected(flag, "flag", None)
    found = installed_version(search_path)
    if found is not None:
        return Detected(found[0], "installed", found[1] or None)
    if config_path is not None:
        pinned = pinned_version(config_path)
        if pinned is not None:
            return Detected(pinned[0], "requirements", pinned[1])
    return Detected(DEFAULT, "default", None)
