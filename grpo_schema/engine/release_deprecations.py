"""The deprecations a TRL release warns about, said with the key that release reads instead, and TRL 1.16's
own deprecation diagnostics re-said (or dropped) for the release a config is judged as."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.release import REFERENCE, _off

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface


@lru_cache(maxsize=1)
def reference_deprecations() -> dict[str, str | None]:
    """TRL 1.16's deprecations (the keys the engine's GRPO-D rules are about), from its own source."""
    from grpo_schema.versions import surface

    return dict(surface(REFERENCE).deprecations)


def deprecated_in_release(mapping: dict[str, Any], release: ReleaseSurface) -> list[Diagnostic]:
    """The release's own deprecations that no 1.16 rule speaks for (max_prompt_length in 0.26, use_liger_loss in
    0.25-0.27, ...), for each key the file sets to something other than the release's default: the release warns
    then (its checks are `if self.key` / `is not None`)."""
    found = []
    for key, use in release.deprecations.items():
        if key in reference_deprecations() or key not in mapping:
            continue
        default = release.fields[key].default
        if mapping[key] == default or (_off(mapping[key]) and _off(default)):
            continue
        found.append(deprecation(key, use, release, codes.D_IN_RELEASE, written=mapping))
    return found


def deprecation(
    key: str, use: str | None, release: ReleaseSurface, code: str, written: Any = (), severity: str = "warning"
) -> Diagnostic:
    """`key is deprecated in TRL X`, with the key that release reads instead (never one it lacks)."""
    r = release.release
    if key in release.unused:
        return Diagnostic(
            code,
            severity,
            f"{key} is deprecated in TRL {r}, which parses it but no longer uses it: the setting has no effect",
            fields=(key,),
            hint=f"remove {key}; TRL {r} reads no other key in its place",
            fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
        )
    if use is None:
        return Diagnostic(
            code,
            severity,
            f"{key} is deprecated in TRL {r}, which reads no other key in its place",
            fields=(key,),
            hint=f"TRL {r} still reads {key}; keep it for that release, or remove it if you do not need the setting",
        )
    fix = None if use in written else Fix(rename={key: use}, safe=False, title=f"rename to {use}")
    return Diagnostic(
        code,
        severity,
        f"{key} is deprecated in TRL {r}; use {use}",
        fields=(key,),
        hint=f"write {use} instead (TRL {r} reads it)",
        fix=fix,
    )


def deprecation_for_release(d: Diagnostic, release: ReleaseSurface) -> Diagnostic | None:
    """A 1.16 GRPO-D diagnostic as it holds for `release`: gone where the release does not warn about the key,
    unchanged where it says to use what 1.16 says, else re-said with the release's own replacement."""
    key = d.fields[0] if d.fields else ""
    if key not in release.deprecations:
        return None  # 1.16's rule, or a key this release does not deprecate (local_rank, GRPO-D005, is 1.16's)
    use = release.deprecations[key]
    if use == reference_deprecations().get(key):
        return d
    said = deprecation(key, use, release, d.code, severity=d.severity)
    return replace(d, message=said.message, hint=said.hint, fix=said.fix, alternatives=())
