"""What Unsloth changes in a GRPOConfig call: `import unsloth` swaps in UnslothGRPOConfig, which rewrites the batch
(applied and shown) and, depending on its version, other values (said, not applied); a file that does not import
unsloth in a repository that installs it is told that another module may.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grpo_schema.dialects.python import codes as pycodes
from grpo_schema.dialects.python.source import Source, unsloth_release_pin
from grpo_schema.engine.check import CheckResult, check_read
from grpo_schema.engine.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
    from grpo_schema.dialects.python.reading import CallReading

MAX_PARENTS = 12  # folders walked up looking for the repository's requirements
_BATCH_NAMES = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations")


def unsloth_era(source: Source, release: str | None) -> str:
    """'before-2025-11' where the file's Unsloth checked per_device_train_batch_size alone: its `unsloth==YYYY.M`
    pin is older than that, or the TRL it runs is older than the 0.18.2 every later Unsloth requires."""
    dated = unsloth_release_pin(source.raw)
    if dated is not None:
        return "before-2025-11" if dated < (2025, 11) else "current"
    from grpo_schema.versions import parse_version

    try:
        old = release is not None and parse_version(release)[:3] < (0, 18, 2)
    except Exception:  # a release the tables cannot read was reported by the check itself
        old = False
    return "before-2025-11" if old else "current"


_UNSLOTH_WORD = re.compile(r"(?<![\w.-])unsloth(?![\w-])", re.I)


def repository_installs_unsloth(path: str) -> bool:
    """Whether a requirements*.txt, pyproject.toml or setup.py of the file's folder or a parent (up to the
    repository's root) names unsloth: its program may import unsloth in another module before this one."""
    if path.startswith("<"):
        return False
    from pathlib import Path

    from grpo_schema.versions.detect import ROOT_MARKERS

    folder = Path(path).resolve().parent
    for _ in range(MAX_PARENTS):
        names = [*sorted(folder.glob("requirements*.txt")), folder / "pyproject.toml", folder / "setup.py"]
        for candidate in names:
            try:
                if candidate.is_file() and _UNSLOTH_WORD.search(candidate.read_text("utf-8", "replace")[:200_000]):
                    return True
            except OSError:
                continue
        if any((folder / marker).exists() for marker in ROOT_MARKERS) or folder.parent == folder:
            return False
        folder = folder.parent
    return False


def unsloth_elsewhere(result: CheckResult) -> list[Diagnostic]:
    """The batch error of a file that does not import unsloth, in a repository that installs it: where the program
    imports unsloth first (its entry script, another module), GRPOConfig is Unsloth's, which rewrites the batch."""
    batch = next((d for d in result.diagnostics if d.code == "GRPO-B001" and d.severity == "error"), None)
    if batch is None:
        return []
    return [
        Diagnostic(
            pycodes.UNSLOTH_REWRITE,
            "info",
            "the repository installs unsloth but this file does not "
            "import it: where the program imports unsloth before trl (in its entry script or another "
            "module), GRPOConfig is Unsloth's, which replaces per_device_train_batch_size by "
            "num_generations instead of failing",
            fields=batch.fields,
            line=batch.line,
            column=batch.column,
            hint="validate with --profile unsloth to judge the batch as Unsloth runs it",
        )
    ]


def unsloth_other(reading: CallReading) -> list[Diagnostic]:
    """The rewrites of UnslothGRPOConfig other than the batch, which depend on Unsloth's version: said where the
    call is exposed to them, never applied (grpo-config does not know them release by release)."""
    if reading.mapping.get("loss_type") != "dapo":
        return []
    line, column = reading.positions.keys[("loss_type",)]
    unset = [k for k in ("epsilon_high", "mask_truncated_completions") if k not in reading.mapping]
    if not unset:
        return []
    return [
        Diagnostic(
            pycodes.UNSLOTH_REWRITE,
            "info",
            f"loss_type='dapo' under Unsloth: its config class may set "
            f"{' and '.join(unset)} for DAPO where the call leaves them out, depending on Unsloth's "
            "version; they are judged here at TRL's defaults",
            fields=("loss_type",),
            line=line,
            column=column,
            hint=f"write {' and '.join(unset)} to have the values you mean judged",
        )
    ]


def unsloth_batch(
    reading: CallReading,
    result: CheckResult,
    shown: str,
    options: dict[str, Any],
    unknown: set[str],
    era: str = "current",
) -> CheckResult:
    """UnslothGRPOConfig sets per_device_train_batch_size = num_generations when neither steps_per_generation nor
    generation_batch_size is given and gradient_accumulation_steps x world size x per_device_train_batch_size is
    not a multiple of num_generations (Unsloth releases before 2025-11-19 looked at per_device_train_batch_size
    alone). The run trains with the rewritten batch: it is judged and explained with it, and the batch finding
    TRL alone would make is kept, as a warning that says what Unsloth does."""
    at = reading.positions.keys.get(("per_device_train_batch_size",)) or (reading.line, reading.column)
    if unknown & set(_BATCH_NAMES) or result.config is None:
        result.diagnostics.append(_undecidable(at))
        return result
    pdb, ga, ng = (getattr(result.config, n) for n in _BATCH_NAMES)
    if not _rewrites(reading, pdb, ga * result.world_size * pdb, ng, era):
        return result
    rewritten = dict(reading.mapping, per_device_train_batch_size=ng)
    fixed = check_read(rewritten, shown, reading.positions, unknown=unknown, **options)
    fixed.sources["per_device_train_batch_size"] = "Unsloth's rewrite"
    fixed.raw = dict(reading.mapping)
    what = (
        f"Unsloth replaces per_device_train_batch_size={pdb} by num_generations={ng}: "
        f"{_rewrite_reason(pdb, ga, ng, result.world_size, era)}, so the run "
        f"trains with {ng} completions per device per micro-step, {ng / max(pdb, 1):g}x the batch written"
    )
    fixed.diagnostics = _rewrite_notes(result, fixed, what, ng, at) + fixed.diagnostics
    return fixed


def _undecidable(at: tuple[int, int]) -> Diagnostic:
    return Diagnostic(
        pycodes.UNSLOTH_REWRITE,
        "info",
        "Unsloth may replace per_device_train_batch_size by "
        "num_generations; whether it does cannot be judged statically (the batch depends on values "
        "known at run time)",
        fields=("per_device_train_batch_size",),
        line=at[0],
        column=at[1],
    )


def _rewrites(reading: CallReading, pdb: int, generated: int, ng: int, era: str) -> bool:
    """Whether this era's Unsloth rewrites the batch; `generated`: the batch over all processes."""
    if era == "before-2025-11":  # that Unsloth looked at per_device_train_batch_size alone
        return not (not ng or pdb % ng == 0)
    set_elsewhere = any(reading.mapping.get(k) is not None for k in ("steps_per_generation", "generation_batch_size"))
    return not (set_elsewhere or not ng or generated % ng == 0)


def _rewrite_reason(pdb: int, ga: int, ng: int, world_size: int, era: str) -> str:
    if era == "before-2025-11":
        return (
            f"per_device_train_batch_size ({pdb}) is not a multiple of num_generations ({ng}) (Unsloth before "
            "2025-11 looked at it alone)"
        )
    return (
        f"gradient_accumulation_steps ({ga}) x world size ({world_size}) x "
        f"per_device_train_batch_size ({pdb}) = {ga * world_size * pdb} is not a multiple of "
        f"num_generations ({ng})"
    )


def _rewrite_notes(
    result: CheckResult, fixed: CheckResult, what: str, ng: int, at: tuple[int, int]
) -> list[Diagnostic]:
    """The first batch error TRL alone would make (and the rewritten batch does not), kept as a warning that says
    what Unsloth does; else a warning of its own."""
    kept = {(d.code, d.message) for d in fixed.diagnostics}
    batch = [
        d
        for d in result.diagnostics
        if d.code.startswith("GRPO-B") and d.severity == "error" and (d.code, d.message) not in kept
    ]
    notes = [
        replace(
            d,
            severity="warning",
            message=f"{what} (TRL alone: {d.message})",
            fields=("per_device_train_batch_size",),
            line=at[0],
            column=at[1],
            hint=f"write per_device_train_batch_size={ng}, the batch Unsloth trains with, or a batch whose "
            "generation batch is a multiple of num_generations",
            fix=Fix(
                set={"per_device_train_batch_size": ng}, safe=False, title=f"write per_device_train_batch_size={ng}"
            ),
            alternatives=(),
        )
        for d in batch[:1]
    ]
    if not notes:
        notes = [
            Diagnostic(
                pycodes.UNSLOTH_BATCH,
                "warning",
                what,
                fields=("per_device_train_batch_size",),
                line=at[0],
                column=at[1],
                hint=f"write per_device_train_batch_size={ng} to say so",
            )
        ]
    return notes
