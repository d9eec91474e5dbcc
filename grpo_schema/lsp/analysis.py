"""A document's text -> the check result (the engine of `grpo validate`) -> LSP diagnostics with ranges.

A diagnostic's range covers the key it is about (`num_generations` on its line), the whole list item for an
item-level diagnostic (`- accuracy` under reward_funcs), or, for a YAML syntax error, the rest of the line from
the position the parser stopped at. The code, a link to its description and the machine fix travel in `data`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp

from grpo_schema.engine.check import CheckResult, _finish

from grpo_schema.engine.validate import check_text
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.lsp.settings import FileSettings, Settings, from_text

SOURCE = "grpo"
CODES_URL = "https://github.com/grpo-config/grpo-config#validate"
# Problems with the `# grpo:` comment or the editor's settings: not a config diagnostic, so not a GRPO code.
SETTINGS_CODE = "grpo-settings"
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}
_SCALAR = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|(?:[^,\]}#]|#(?<! #))*)""")
_KEY = re.compile(r"""\s*(?:"[^"]*"|'[^']*'|[^\s:#][^:#]*?)\s*(?=:(\s|$))""")


@dataclass
class Analysis:
    text: str
    settings: FileSettings
    result: CheckResult
    diagnostics: list[lsp.Diagnostic]
    with_fixes: bool = False


def check_document(text: str, settings: Settings, with_fixes: bool = False) -> Analysis:
    """Check `text` as `grpo validate` would with these settings (the file's `# grpo:` comments applied).

    Without `with_fixes` the search for the smallest batch edits (it checks the file again per candidate, a few
    times the cost of the check) is left out: diagnostics while typing do not need it, quick fixes ask for it."""
    file_settings = from_text(text, settings)
    chosen = file_settings.settings
    extra: list[Diagnostic] = []
    options: dict[str, Any] = {"world_size": chosen.world_size, "allow_env": chosen.allow_env,
                               "suggest_fixes": with_fixes}
    comment_line = (file_settings.lines[0] + 1) if file_settings.lines else None
    try:
        from grpo_schema.engine.check import resolve_profiles

        options["profiles"] = resolve_profiles(chosen.profiles)
    except (KeyError, ImportError, AttributeError, ValueError) as exc:
        from grpo_schema.engine.profiles import known_profiles

        extra.append(Diagnostic(SETTINGS_CODE, "error", f"unknown profile {exc}", line=comment_line, column=1,
                                hint=f"known profiles: {', '.join(sorted(known_profiles()))}"))
        options["profiles"] = ()
    result = _check(text, chosen.hardware, options, extra, comment_line)
    for problem in file_settings.problems:
        extra.append(Diagnostic(SETTINGS_CODE, "error", problem.message, line=problem.line + 1, column=1,
                                hint="the comment takes --world-size N, --profile NAME, --hardware SPEC, "
                                     "--allow-env NAME"))
    lines = text.splitlines()
    diagnostics = [to_lsp(d, lines) for d in extra + result.diagnostics]
    return Analysis(text, file_settings, result, diagnostics, with_fixes)


def _check(text: str, hardware: str | None, options: dict[str, Any], extra: list[Diagnostic],
           comment_line: int | None) -> CheckResult:
    result = check_text(text, path="<editor>", **options)
    wanted = hardware or (result.raw.get("hardware") if isinstance(result.raw, dict) else None)
    if not wanted or not result.raw:
        return result
    # The same path as `grpo validate --hardware`: the fit's diagnostics added to the check at that world size.
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware
    from grpo_schema.commands.plan import check_for_hardware

    if hardware:
        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            extra.append(Diagnostic(SETTINGS_CODE, "error", f"hardware {hardware!r}: {exc}", line=comment_line,
                                    column=1))
            return result
    fit_options = {k: v for k, v in options.items() if k != "suggest_fixes"}
    fitted, report = check_for_hardware(text, "<editor>", hardware, batch_fixes=options["suggest_fixes"],
                                        **fit_options)
    fitted.diagnostics = fitted.diagnostics + report.diagnostics
    return _finish(fitted)


def key_range(lines: list[str], line: int, column: int) -> lsp.Range:
    """The range of the key (or list item) starting at 0-based (line, column)."""
    if line >= len(lines):
        return lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0))
    text = lines[line]
    column = min(column, len(text))
    rest = text[column:]
    if rest.startswith("-"):  # a list item: the item itself, without a trailing comment
        end = column + len(_without_comment(rest).rstrip())
        return lsp.Range(lsp.Position(line, column), lsp.Position(line, max(end, column + 1)))
    match = _KEY.match(rest)
    if match and match.group(0).strip():
        start = column + len(match.group(0)) - len(match.group(0).lstrip())
        return lsp.Range(lsp.Position(line, start), lsp.Position(line, column + len(match.group(0).rstrip())))
    value = _SCALAR.match(rest)  # a value: a flow item ends at `,` `]` `}`, a quoted one at its closing quote
    end = column + len(value.group(0).rstrip()) if value else column
    return lsp.Range(lsp.Position(line, column), lsp.Position(line, max(end, column + 1) if rest else column))


def utf16(text: str, column: int) -> int:
    """A column counted in code points -> in UTF-16 code units, LSP's default (an emoji counts twice)."""
    head = text[:column]
    return column + sum(1 for ch in head if ord(ch) > 0xFFFF)


def from_utf16(text: str, units: int) -> int:
    """A client's UTF-16 column -> a code-point column of `text`."""
    column = 0
    for ch in text:
        units -= 2 if ord(ch) > 0xFFFF else 1
        if units < 0:
            break
        column += 1
    return column


def _in_utf16(lines: list[str], rng: lsp.Range) -> lsp.Range:
    def at(position: lsp.Position) -> lsp.Position:
        text = lines[position.line] if position.line < len(lines) else ""
        return lsp.Position(position.line, utf16(text, position.character))

    return lsp.Range(at(rng.start), at(rng.end))


def _without_comment(text: str) -> str:
    cut = text.find(" #")
    return text if cut < 0 else text[:cut]


def to_lsp(diag: Diagnostic, lines: list[str]) -> lsp.Diagnostic:
    line = (diag.line or 1) - 1
    column = (diag.column or 1) - 1
    if diag.line is None:  # about the whole file (or a command-line value): the first line
        rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, utf16(lines[0], len(lines[0])) if lines else 0))
    else:
        rng = _in_utf16(lines, key_range(lines, line, column))
    message = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
    data = {"code": diag.code, "description": _description(diag.code), "fields": list(diag.fields), "hint": diag.hint,
            "fix": diag.fix.to_dict() if diag.fix else None,
            "alternatives": [alt.to_dict() for alt in diag.alternatives]}
    return lsp.Diagnostic(range=rng, message=message, severity=SEVERITY[diag.severity], code=diag.code,
                          source=SOURCE, data=data,
                          code_description=lsp.CodeDescription(href=CODES_URL))


def _description(code: str) -> str:
    """What `grpo codes CODE` prints."""
    from grpo_schema.engine.codes import CODES
    from grpo_schema.engine.rules import describe_code

    return describe_code(code) if code in CODES else ""
