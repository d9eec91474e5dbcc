"""What the check says about how a run was read: the launch (its entry point, base config, the script's own
arguments, the branch it sits in), how each override's value was resolved, the words that are no override, and the
values the rules cannot know."""

from __future__ import annotations

from grpo_schema.dialects.verl import codes
from grpo_schema.dialects.verl.config import VerlConfig
from grpo_schema.dialects.verl.fields import FieldTable
from grpo_schema.dialects.verl.launch import Run
from grpo_schema.dialects.verl.rules import load_verl_rules
from grpo_schema.engine.diagnostics import Diagnostic


def script_notes(run: Run, fields: FieldTable) -> list[Diagnostic]:
    return launch_notes(run, fields) + setting_notes(run)


def launch_notes(run: Run, fields: FieldTable) -> list[Diagnostic]:
    """How the launch itself is read, each said at its line."""
    said = [
        (
            run.passthrough,
            "the launch passes the script's own arguments on ($@): "
            "overrides given when the script runs are not known here",
        ),
        (
            run.config_name.removesuffix(".yaml") != fields.base,
            f"the base config {run.config_name!r} comes from "
            f"{run.config_path or 'a --config-path folder'}; keys are checked against verl's "
            f"{fields.base}",
        ),
        (
            _before(fields.release, (0, 9)) and not run.entry.endswith("main_ppo_v0"),
            f"verl {fields.release} runs its own config checks "
            "(validate_config) inside Ray, after the cluster is allocated (0.9.0 moved them before "
            "Ray): the parse-time findings here are found there on the cluster",
        ),
        (
            run.entry.endswith("fully_async_main"),
            "fully_async_main is verl's fully async trainer: it runs "
            "verl's own checks inside Ray, after the cluster is allocated; the rules here judge its "
            "config as verl's trainer would",
        ),
        (
            run.entry.endswith("main_ppo_v0"),
            "main_ppo_v0 is verl's legacy path: it runs verl's own "
            "checks inside Ray, after the cluster is allocated, not before",
        ),
        (bool(run.block), f"the launch sits inside {run.block}; it is checked as if that branch runs"),
    ]
    return [Diagnostic(codes.SCRIPT_NOTE, "info", message, line=run.line, column=1) for shown, message in said if shown]


def setting_notes(run: Run) -> list[Diagnostic]:
    """How each override's value was resolved (a default taken, ...), and the words of the launch that are no
    override: unknown (a warning) or not key=value (an error)."""
    notes = []
    for setting in run.settings:
        for note in setting.notes:
            notes.append(
                Diagnostic(
                    codes.SCRIPT_NOTE,
                    "info",
                    f"{setting.key}: {note}",
                    fields=(setting.key,),
                    line=setting.line,
                    column=setting.column,
                )
            )
    for word, why in run.unread:
        code, severity = (codes.UNREAD_WORD, "warning") if word.text is None else (codes.BAD_OVERRIDE, "error")
        shown = f"{word.text!r}: {why}" if word.text is not None else why
        notes.append(
            Diagnostic(
                code,
                severity,
                shown,
                line=word.line or run.line,
                column=word.column or 1,
                hint="" if word.text is None else "write key=value (a dotted key of verl's config)",
            )
        )
    return notes


def _before(version: str, line: tuple[int, int]) -> bool:
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    return parts < line


def unknown_notes(config: VerlConfig) -> list[Diagnostic]:
    read = {key for rule in load_verl_rules() for key in rule.reads}
    out = []
    for key, why in config.unknown.items():
        setting = config.settings.get(key)
        if key in read and setting is not None:
            out.append(
                Diagnostic(
                    codes.UNKNOWN_VALUE,
                    "info",
                    f"{key} is not known: {why}; the checks that read it are skipped",
                    fields=(key,),
                    line=setting.line,
                    column=setting.column,
                    hint="pass --set to give it a value, or set it in the script",
                )
            )
    return out
