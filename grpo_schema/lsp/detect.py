"""Is this YAML document a GRPO config? Editors attach `grpo lsp` to every YAML file (a GitHub workflow, a
docker-compose file, an action.yml); the server checks only the configs and publishes nothing for the rest.

In order, the first that applies decides:

1. a modeline: `# grpo: ...` (the in-file settings comment) or `# yaml-language-server: $schema=...grpo...` says
   yes; a `$schema=` modeline naming another schema says no;
2. the file's path matches one of `grpo.filePatterns` (default `*.grpo.yaml`, `*.grpo.yml`, `**/recipes/**/*.yaml`,
   `**/recipes/**/*.yml`; a pattern without `/` matches the file name, one with `/` the end of the path, `**`
   any folders): yes;
3. its top-level keys: yes when at least two of them are keys a GRPO config has (TRL's GRPO fields, their old
   names, `accelerate launch` options, a known profile's script keys, `env`, `hardware`) and more than half of them
   are; a file of one top-level key counts when that key is one. Otherwise no.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlparse

_MODELINE = re.compile(r"^\s*#\s*yaml-language-server\s*:\s*\$schema\s*=\s*(?P<schema>\S+)")
_GRPO_COMMENT = re.compile(r"^\s*#\s*grpo:")
_TOP_KEY = re.compile(r"""^(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#:'"\-?][^:#]*?))\s*:(?:\s|$)""")


@functools.lru_cache(maxsize=1)
def known_keys() -> frozenset[str]:
    from grpo_schema.engine.keys import field_names, launch_keys
    from grpo_schema.engine.migrations import MIGRATIONS
    from grpo_schema.engine.profiles import known_profiles

    keys = set(field_names()) | set(launch_keys()) | set(MIGRATIONS) | {"env", "hardware"}
    for profile in known_profiles().values():
        keys |= set(profile.keys)
    return frozenset(keys)


def path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else unquote(parsed.path or uri)


@functools.lru_cache(maxsize=64)
def _pattern(glob: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    # Without a folder part, `[^/]*` keeps it to the file name; with one, it matches the end of the path at a
    # folder boundary.
    return re.compile(f"(?:^|/){''.join(out)}$")


def matches(path: str, patterns: tuple[str, ...]) -> bool:
    path = path.replace("\\", "/")
    return any(_pattern(p[2:] if p.startswith("./") else p).search(path) for p in patterns)


def top_level_keys(text: str) -> list[str]:
    keys = []
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or line.startswith(("---", "...")):
            continue
        match = _TOP_KEY.match(line)
        if match:
            keys.append(match["dq"] if match["dq"] is not None else match["sq"] if match["sq"] is not None
                        else match["plain"].strip())
    return keys


def modeline_says(text: str) -> bool | None:
    """True for a GRPO modeline, False for a schema modeline naming something else, None without one."""
    for line in text.splitlines():
        if "#" not in line:
            continue
        if _GRPO_COMMENT.match(line):
            return True
        found = _MODELINE.match(line)
        if found:
            return "grpo" in found["schema"].lower()
    return None


def by_content(text: str) -> bool:
    keys = top_level_keys(text)
    known = sum(1 for key in keys if key in known_keys())
    if len(keys) == 1:
        return known == 1
    return known >= 2 and 2 * known > len(keys)


def is_grpo_config(uri: str, text: str, patterns: tuple[str, ...]) -> bool:
    said = modeline_says(text)
    if said is not None:
        return said
    if matches(path_of(uri), patterns):
        return True
    return by_content(text)
