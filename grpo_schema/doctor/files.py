"""Freeze, lock, requirements and conda environment files read into an `Environment`: `name==version` lines, `name @
URL` lines, pip-tools/uv `--hash` continuations, `-r` includes (relative to the including file), `uv.lock` /
`poetry.lock` TOML, a conda environment.yml's pip section; lines that are none of these are reported by number, and
a format that is none of these is refused."""

from __future__ import annotations

import re
from pathlib import Path

from .implied import implied
from .packages import Environment, EnvironmentError_, Package, canonical

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
        implied(env)
    return env


# What pip installs with these packages at any release since TRL 0.14's day (the unconditional Requires-Dist of
# their wheels): torch under everything that trains or generates with it. Followed after trl's own requirements,
# so a file that pins trl alone has torch through accelerate.


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
