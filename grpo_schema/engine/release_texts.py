"""What a surface says about a key, for the release a config is judged as.

The fields' texts (descriptions, the rules that read a field) are written for TRL 1.16. For another release a
sentence is left out when it names a key that release lacks, or tells of a deprecation it does not have: renaming
as told must never name a key the release's parser stops on.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from grpo_schema.engine import codes
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.release_deprecations import deprecation

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

_KEYISH = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_SENTENCE = re.compile(r"(?<=[.;!?)])\s+(?=[A-Z(`'\"])")
_DEPRECATION_WORDS = re.compile(r"^\(?(?:Deprecated|Older name)\b|deprecated alias", re.IGNORECASE)
_VALUE_LINE = re.compile(r"^(- )?`[^`]*`: ")
CHECKED = "**Checked with other fields by:** "


@lru_cache(maxsize=1)
def known_keys() -> frozenset[str]:
    """Every key some release reads, and every key of TRL 1.16's models."""
    from grpo_schema.versions import releases, surface

    keys = set(compiled("config").fields)
    for name in releases():
        keys |= set(surface(name).fields)
    return frozenset(keys)


@lru_cache(maxsize=64)
def _lacking_in(version: str) -> frozenset[str]:
    from grpo_schema.versions import surface

    return known_keys() - set(surface(version).fields)


def _lacking(release: ReleaseSurface) -> frozenset[str]:
    return _lacking_in(release.release)


def holds_for(sentence: str, key: str, release: ReleaseSurface) -> bool:
    """Whether a sentence about `key` names only keys the release reads, and no deprecation it lacks."""
    if any(token in _lacking(release) for token in _KEYISH.findall(sentence)):
        return False
    return key in release.deprecations or not _DEPRECATION_WORDS.search(sentence)


def _sentences(text: str, key: str, release: ReleaseSurface) -> str:
    prefix = _VALUE_LINE.match(text)  # `- \`steps\`: ...`: the value stays, its explanation is filtered
    head = prefix.group(0) if prefix else ""
    kept = " ".join(s for s in _SENTENCE.split(text[len(head) :]) if holds_for(s, key, release))
    return head + kept if kept else head.rstrip().rstrip(":")


def _checked(paragraph: str, key: str, release: ReleaseSurface) -> str:
    """The rules paragraph: a rule stays when its text holds for the release (a GRPO-D rule only where the release
    deprecates the key)."""
    body, tail = paragraph[len(CHECKED) :], ""
    cut = body.rfind(". `grpo codes")
    if cut >= 0:
        body, tail = body[:cut], body[cut:]
    kept = [
        item
        for item in body.split("; ")
        if holds_for(item, key, release) and not (item.startswith("`GRPO-D") and key not in release.deprecations)
    ]
    return CHECKED + "; ".join(kept) + tail if kept else ""


def for_release(text: str, key: str, release: ReleaseSurface, fallback: str = "") -> str:
    """1.16's text about `key`, as it holds for `release` (`fallback` stands in for a first paragraph left empty)."""
    paragraphs = []
    for index, paragraph in enumerate(text.split("\n\n")):
        if paragraph.startswith(CHECKED):
            said = _checked(paragraph, key, release)
        elif paragraph.startswith("**"):  # **Default:** ... (the release's own, written by the surface)
            said = paragraph
        else:
            said = "\n".join(line for line in (_sentences(x, key, release) for x in paragraph.split("\n")) if line)
        if index == 0 and not said:
            said = fallback
        if said:
            paragraphs.append(said)
    return "\n\n".join(paragraphs)


def status(key: str, release: ReleaseSurface) -> str:
    """Whether the release reads `key`, whether it deprecates it, and from which later release it is not read."""
    from grpo_schema.versions import parse_version, releases, surface

    r = release.release
    if key not in release.fields:
        return f"not read by TRL {r}"
    said = f"read by TRL {r} ({release.fields[key].source or 'its parser'})"
    if key in release.deprecations:
        said += "; " + deprecation(key, release.deprecations[key], release, codes.D_IN_RELEASE).message
    later = [n for n in releases() if parse_version(n) > release.version and key not in surface(n).fields]
    return said + (f"; not read from TRL {later[0]} on" if later else "")
