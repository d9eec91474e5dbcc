"""What a call leaves unknown until run time: each unknown said with the rules it keeps from being judged, the
training batch judged alone where only the evaluation side is unknown, and the call judged again with the script's
own command-line defaults (an information)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from grpo_schema.dialects.python import codes as pycodes
from grpo_schema.dialects.python.as_python import as_python
from grpo_schema.dialects.python.reading import CallReading
from grpo_schema.dialects.python.source import Source
from grpo_schema.dialects.python.unsloth import unsloth_batch
from grpo_schema.engine.check import BATCH_INPUTS, CheckResult, check_read
from grpo_schema.engine.diagnostics import Diagnostic

# The evaluation side of the batch rules: unknown there, the training batch is still judged on its own.
EVAL_SIDE = frozenset({"per_device_eval_batch_size", "eval_strategy", "do_eval", "eval_steps", "eval_on_start"})
MAX_LISTED = 8


def with_command_line_defaults(readings: list[CallReading], source: Source) -> None:
    from grpo_schema.dialects.python.cli_defaults import command_line_defaults, default_for

    defaults = command_line_defaults(source.tree)  # type: ignore[arg-type]
    if not defaults:
        return
    for reading in readings:
        for name, value in reading.unknown.items():
            found = default_for(value, defaults)
            if found is not None:
                reading.defaults[name] = found


def judged_with_defaults(
    reading: CallReading,
    result: CheckResult,
    shown: str,
    options: dict[str, Any],
    unknown: set[str],
    unsloth: str | None,
) -> list[Diagnostic]:
    """GRPO-F011: the call judged with the script's own command-line defaults for the unknowns that have one. An
    information: the run may pass other values, so the verdict stays the one above."""
    if not reading.defaults or reading.opaque:
        return []
    still = sorted(set(reading.unknown) - set(reading.defaults))
    mapping = dict(reading.mapping, **{name: default for name, (_, default) in reading.defaults.items()})
    known = unknown - set(reading.defaults)
    hypothetical = check_read(mapping, shown, reading.positions, unknown=known, **options)
    if unsloth:  # judged as Unsloth runs it, as the call itself is
        assumed = replace(reading, mapping=mapping, unknown={})
        hypothetical = unsloth_batch(assumed, hypothetical, shown, options, known, unsloth)
    said = {(d.code, d.message) for d in result.diagnostics}
    new = [d for d in as_python(hypothetical, reading) if d.severity == "error" and (d.code, d.message) not in said]
    given = ", ".join(f"{name}={default!r}" for name, (_, default) in reading.defaults.items())
    verdict = (
        f"{new[0].code} {new[0].message}" + (f" (and {len(new) - 1} more)" if len(new) > 1 else "")
        if new
        else f"valid at world size {hypothetical.world_size}"
    )
    if still:
        verdict += f" ({_listed(still)} still unknown)"
    return [
        Diagnostic(
            pycodes.WITH_DEFAULTS,
            "info",
            f"with the command line's defaults ({given}): {verdict}",
            fields=tuple(reading.defaults),
            line=reading.line,
            column=reading.column,
            hint="the run may pass other values: check the command that launches it"
            if not new
            else "change the parser's default, or pass a value that fixes it at launch",
        )
    ]


def train_batch_alone(
    reading: CallReading, result: CheckResult, shown: str, options: dict[str, Any], unknown: set[str]
) -> list[Diagnostic]:
    """The training batch's findings where only the evaluation side is unknown (per_device_eval_batch_size=
    args.eval_batch_size): the batch rules read both sides, so the unknown would leave a training batch that no
    eval batch can mend unjudged. Judged with evaluation off, only the findings about the training batch kept."""
    eval_unknown = unknown & EVAL_SIDE
    if not eval_unknown or unknown & BATCH_INPUTS or result.config is None:
        return []
    mapping = {k: v for k, v in reading.mapping.items() if k not in EVAL_SIDE}
    alone = check_read(
        dict(mapping, eval_strategy="no"), shown, reading.positions, unknown=unknown - EVAL_SIDE, **options
    )
    said = {(d.code, d.message) for d in result.diagnostics}
    return [
        d
        for d in alone.diagnostics
        if d.code.startswith("GRPO-B") and not set(d.fields) & EVAL_SIDE and (d.code, d.message) not in said
    ]


def reader_diagnostics(reading: CallReading, result: CheckResult, unknown: set[str]) -> list[Diagnostic]:
    out = []
    skipped = _skipped_rules(unknown, result)
    for name, value in reading.unknown.items():
        line, column = reading.positions.keys[(name,)]
        not_judged = skipped.get(name, [])
        tail = f"; not judged: {_listed(not_judged)}" if not_judged else ""
        if name in reading.defaults:
            option, default = reading.defaults[name]
            tail = f"; the script's parser gives {default!r} when {option} is not passed" + tail
        out.append(
            Diagnostic(
                pycodes.NOT_STATIC,
                "info",
                f"{name} = {value.source}: unknown: cannot judge statically ({value.why}){tail}",
                fields=(name,),
                line=line,
                column=column,
                hint="write it as a literal or a module constant to have it checked",
            )
        )
    call = reading.call
    for part in call.opaque:
        batch = sorted(k for k in BATCH_INPUTS if k not in reading.mapping)
        out.append(
            Diagnostic(
                pycodes.OPAQUE,
                "warning",
                f"{part.source}: unknown: cannot judge statically "
                f"({part.reason}); any GRPOConfig argument may be set there, so the batch "
                f"({', '.join(batch)}) is not judged",
                line=_line(reading, part.line),
                column=part.column,
                hint="write the keyword arguments in the call, or check the file the values come from",
            )
        )
    for dup in call.duplicates:
        out.append(
            Diagnostic(
                pycodes.DUPLICATE,
                "error",
                f"{dup.name} is given twice (the second from "
                f"{dup.via or 'a keyword'}): GRPOConfig(...) raises TypeError",
                fields=(dup.name,),
                line=_line(reading, dup.line),
                column=dup.column,
                hint=f"give {dup.name} once",
            )
        )
    return out


def _line(reading: CallReading, module_line: int) -> int:
    """A module line in the numbering of the call's result (its cell's, for a notebook)."""
    return reading.line + (module_line - reading.call.line)


def _skipped_rules(unknown: set[str], result: CheckResult) -> dict[str, list[str]]:
    from grpo_schema.engine.rules import load_rules

    out: dict[str, list[str]] = {}
    for rule in load_rules():
        for name in unknown:
            if name in rule.reads or (rule.needs_plan and name in BATCH_INPUTS and result.plan is None):
                out.setdefault(name, [])
                if rule.code not in out[name]:
                    out[name].append(rule.code)
    return out


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")
