"""Does `grpo lsp` check this YAML document? Editors attach it to every YAML file (a GitHub workflow, a docker-compose
file, an accelerate config beside the recipes); the server checks the GRPO configs and says nothing of the rest.

What the file is decides first, as on every surface (grpo_schema.engine.recognise: a top-level `# grpo:` line or a
grpo `$schema` modeline, GRPO-only keys, another kind's keys). Then:

- a GRPO config: checked;
- another kind of file: not checked; when its path matches `grpo.filePatterns` (where the user expects a config)
  it gets the one GRPO-Y016 note `grpo validate` gives it, so the silence is explained, else nothing;
- undecided (no GRPO-only key, no other kind's signature): checked when its path matches `grpo.filePatterns`
  (default `*.grpo.yaml`, `*.grpo.yml`, `**/recipes/**/*.yaml`, `**/recipes/**/*.yml`; a pattern without `/`
  matches the file name, one with `/` the end of the path, `**` any folders), or when at least two of its
  top-level keys are keys a GRPO config has (TRL's fields, their old names, `accelerate launch` options, a known
  profile's script keys, `env`, `hardware`) and more than half are (one key: when it is one); otherwise not.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlparse

from grpo_schema.engine.recognise import recognise, top_level_keys

CHECK, NOTE, SKIP = "check", "note", "skip"  # what the server does with a document


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


def by_content(text: str) -> bool:
    """An undecided document whose top-level keys are mostly keys a GRPO config may have."""
    keys = [key for key, _ in top_level_keys(text)]
    known = sum(1 for key in keys if key in known_keys())
    if len(keys) == 1:
        return known == 1
    return known >= 2 and 2 * known > len(keys)


def attachment(uri: str, text: str, patterns: tuple[str, ...]) -> str:
    """CHECK, NOTE (another kind of file where a config was expected: the engine's one note) or SKIP."""
    kind = recognise(text).is_grpo
    if kind:
        return CHECK
    expected = matches(path_of(uri), patterns)
    if kind is False:
        return NOTE if expected else SKIP
    return CHECK if expected or by_content(text) else SKIP
