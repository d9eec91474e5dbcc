"""Pairs of keys the judged release's training arguments refuse together, where one of them is a key TRL 1.16 no
longer reads (so no 1.16 rule can see it): checked as the release reads the file, its defaults included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.coerce import bool_word
from grpo_schema.engine.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface


def refused_pairs(mapping: dict[str, Any], release: ReleaseSurface) -> list[Diagnostic]:
    return [d for d in (apex_with_bf16(mapping, release),) if d is not None]


def apex_with_bf16(mapping: dict[str, Any], release: ReleaseSurface) -> Diagnostic | None:
    """transformers 4.x raises "GPU bf16 is not supported by apex" when the arguments are built: the run stops
    before it starts. From TRL 0.19, bf16 left out (or null) means `not fp16`, so apex alone meets it."""
    if "half_precision_backend" not in release.fields or mapping.get("half_precision_backend") != "apex":
        return None
    bf16, why = effective_bf16(mapping, release)
    if not bf16:
        return None
    return Diagnostic(
        codes.T_APEX_BF16,
        "error",
        f"half_precision_backend: apex with bf16 on ({why}): transformers {release.transformers}, which TRL "
        f"{release.release} runs with, refuses it (apex's mixed precision is fp16 only)",
        fields=("half_precision_backend", "bf16"),
        hint="use half_precision_backend: auto (torch's own mixed precision), or fp16: true with bf16: false to "
        "keep apex",
        fix=Fix(set={"half_precision_backend": "auto"}, safe=False, title="use torch's own mixed precision"),
    )


def effective_bf16(mapping: dict[str, Any], release: ReleaseSurface) -> tuple[bool, str]:
    """bf16 as the release's arguments hold it after they are built, and why."""
    written = mapping.get("bf16")
    value = written if isinstance(written, bool) else bool_word(written)  # the parser reads "true" as True
    if value is not None:
        return value, f"bf16: {written if isinstance(written, str) else str(written).lower()}"
    info = release.fields.get("bf16")
    if info is not None and info.post_init is not None:  # TRL 0.19 on: None becomes `not fp16`
        fp16 = mapping.get("fp16")
        return not (fp16 is True or bool_word(fp16)), f"TRL {release.release} turns bf16 on when fp16 is off"
    return bool(info is not None and info.default), f"TRL {release.release}'s default bf16"
