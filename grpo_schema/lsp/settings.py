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


def from_client(options: Any, base: Settings | None = None) -> Settings:
    """Settings from the client's JSON: {"grpo": {...}} or the section itself. Unknown or ill-typed keys are
    ignored (an editor's settings UI is not the place to fail)."""
    base = base or Settings()
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
    version = section.get("trlVersion", section.get("trl_version"))
    if isinstance(version, str) and version.strip():
        from grpo_schema.versions import VersionError, parse_version

        try:
            parse_version(version)
            out = replace(out, trl_version=version.strip())
        except VersionError:
            pass  # ignored, as other ill-typed settings are
    debounce = section.get("debounceMs")
    if isinstance(debounce, int) and not isinstance(debounce, bool) and 0 <= debounce <= 5_000:
        out = replace(out, debounce_ms=debounce)
    patterns = section.get("filePatterns", section.get("file_patterns"))
    if isinstance(patterns, str):
        patterns = [patterns]
    if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
        out = replace(out, file_patterns=tuple(patterns))
    return out
