"""The editor's settings (`initializationOptions` or `workspace/didChangeConfiguration`, under a `grpo` section).

They are defaults, below everything the file says: what a file declares (a `# grpo: --world-size N --profile P`
comment, read by the engine, grpo_schema.engine.infile, exactly as `grpo validate` reads it; then its own
`num_processes`) wins, so the editor and the command line give one answer. The editor's `worldSize` applies only
to a file that declares none; its `profiles` only to a file whose comment names none. `filePatterns` says where
configs are expected: a file there that nothing recognises as one kind or another is checked (grpo_schema.lsp.detect).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

DEFAULT_DEBOUNCE_MS = 10
# Where configs are expected: an undecided file there is checked, another kind gets its note (see detect.py).
DEFAULT_FILE_PATTERNS = ("*.grpo.yaml", "*.grpo.yml", "**/recipes/**/*.yaml", "**/recipes/**/*.yml")


@dataclass(frozen=True)
class Settings:
    world_size: int | None = None
    profiles: tuple[str, ...] = ()
    hardware: str | None = None
    allow_env: tuple[str, ...] = ()
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    file_patterns: tuple[str, ...] = DEFAULT_FILE_PATTERNS
    trl_version: str | None = None  # the editor's (or `grpo lsp --trl-version`); a file's `# grpo:` comment wins
    # (severity, message, hint) for a setting that cannot be used as given: shown on every document, as a bad
    # profile is, and as `grpo validate --trl-version` says the same value
    problems: tuple[tuple[str, str, str], ...] = ()


def from_client(options: Any, base: Settings | None = None) -> Settings:
    """Settings from the client's JSON: {"grpo": {...}} or the section itself. Unknown or ill-typed keys are
    ignored (an editor's settings UI is not the place to fail), except the release, which decides every verdict:
    one that is not a TRL release is an error on every document (as an unknown profile is), one newer than the
    tables the warning `grpo validate --trl-version` gives."""
    base = replace(base or Settings(), problems=())  # said again only while the new settings still hold them
    if not isinstance(options, dict):
        return base
    section = options.get("grpo", options)
    if not isinstance(section, dict):
        return base
    out = base
    world = section.get("worldSize", section.get("world_size"))
    if isinstance(world, int) and not isinstance(world, bool) and world >= 1:
        out = replace(out, world_size=world)
    elif world is None and ("worldSize" in section or "world_size" in section):
        out = replace(out, world_size=None)
    profiles = section.get("profiles", section.get("profile"))
    if isinstance(profiles, str):
        profiles = [profiles]
    if isinstance(profiles, list) and all(isinstance(p, str) for p in profiles):
        out = replace(out, profiles=tuple(profiles))
    hardware = section.get("hardware")
    if (hardware is None or isinstance(hardware, str)) and "hardware" in section:
        out = replace(out, hardware=hardware or None)
    allow_env = section.get("allowEnv", section.get("allow_env"))
    if isinstance(allow_env, list) and all(isinstance(p, str) for p in allow_env):
        out = replace(out, allow_env=tuple(allow_env))
    if any(key in section for key in ("trlVersion", "trl_version")):
        out = _release(out, section.get("trlVersion", section.get("trl_version")))
    debounce = section.get("debounceMs")
    if isinstance(debounce, int) and not isinstance(debounce, bool) and 0 <= debounce <= 5_000:
        out = replace(out, debounce_ms=debounce)
    # `files`: VS Code's own name for them (grpo.files), as its client sends the section on every change
    patterns = section.get("filePatterns", section.get("file_patterns", section.get("files")))
    if isinstance(patterns, str):
        patterns = [patterns]
    if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
        out = replace(out, file_patterns=tuple(patterns))
    return out


def _release(out: Settings, version: Any) -> Settings:
    """The editor's trlVersion: kept when it is a release the tables judge (a newer one is judged as the newest,
    with the CLI's warning); otherwise not used, with the error every surface gives for it."""
    import warnings

    from grpo_schema.versions import VersionError, parse_version

    if version is None or (isinstance(version, str) and not version.strip()):
        return out  # not set here: `grpo lsp --trl-version`, else the installed trl
    hint = "set grpo.trlVersion to a TRL release such as 1.16 or 0.19.1, or remove it to use the installed trl"
    if not isinstance(version, str):
        return replace(
            out,
            problems=out.problems
            + (("error", f"trlVersion {version!r} in the editor's settings is not a TRL release", hint),),
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parse_version(version.strip())
        except VersionError as exc:
            return replace(
                out,
                problems=out.problems + (("error", f"trlVersion {version!r} in the editor's settings: {exc}", hint),),
            )
    said = tuple(("warning", f"trlVersion {version!r} in the editor's settings: {w.message}", hint) for w in caught)
    return replace(out, trl_version=version.strip(), problems=out.problems + said)
