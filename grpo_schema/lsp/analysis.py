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

from grpo_schema.engine import codes
from grpo_schema.engine.check import CheckResult, resolve_profiles
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.infile import OPTIONS_HELP, FileSettings, read_file_settings
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.placing import finish
from grpo_schema.engine.profiles import Profile
from grpo_schema.engine.validate import check_text
from grpo_schema.lsp.detect import CHECK, NOTE, SKIP, attachment
from grpo_schema.lsp.settings import Settings

SOURCE = "grpo"
CODES_URL = "https://github.com/grpo-config/grpo-config#validate"
# Problems with the editor's settings: not a config diagnostic, so not a GRPO code (the `# grpo:` comment's are the
# engine's GRPO-Y015, as `grpo validate` reports them).
SETTINGS_CODE = "grpo-settings"
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}
_SCALAR = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|(?:[^,\]}#]|#(?<! #))*)""")
_KEY = re.compile(r"""\s*(?:"[^"]*"|'[^']*'|[^\s:#][^:#]*?)\s*(?=:(\s|$))""")


@dataclass
class Analysis:
    text: str
    file_settings: FileSettings  # the file's `# grpo:` comment, as the engine reads it
    result: CheckResult
    diagnostics: list[lsp.Diagnostic]
    with_fixes: bool = False
    profiles: tuple[Profile, ...] = ()  # the active ones: the comment's, else the editor's
    world_size_from: str = ""  # where the world size was declared, for the hover text
    is_config: bool = True  # False: not a GRPO config (detect.py); at most the engine's note on it
    python: Any = None  # a Python script or notebook: every call's check (grpo_schema.dialects.python.PythonCheck)


def not_a_config(text: str, result: CheckResult | None = None) -> Analysis:
    """No hover, completion or actions; with `result`, its diagnostics (the engine's one GRPO-Y016 note)."""
    result = result or CheckResult("<editor>", 1)
    lines = split_lines(text)
    return Analysis(text, FileSettings(), result, [to_lsp(d, lines) for d in result.diagnostics], is_config=False)


def check_document(text: str, settings: Settings, with_fixes: bool = True, uri: str = "") -> Analysis:
    """Check `text` as `grpo validate` would: check_text reads the file's `# grpo:` comment itself (the same
    precedence as the CLI), and the editor's settings are the defaults below it (its world size applies only when
    the file declares none). A document that is not a GRPO config (detect.py) gets no diagnostics, or, where the
    editor's file patterns expected a config, the one note `grpo validate` gives it.

    With `with_fixes` (the server's every check) the batch rules carry their smallest edits, and so the hint
    `grpo validate` prints ("smallest edits: ... As written, the config is valid for world sizes ..."): one text
    from the engine on both surfaces. Without it (benchmarks of the bare check) the hint is the rule's own."""
    from grpo_schema.dialects.verl.check import check_verl_text, looks_like_verl

    if looks_like_verl(text):  # a verl launch script or YAML: verl's checker, diagnostics only (no TRL hover)
        verl = check_verl_text(text, "<editor>")
        return Analysis(
            text, FileSettings(), verl, [to_lsp(d, text.splitlines()) for d in verl.diagnostics], is_config=False
        )
    attach = attachment(uri, text, settings.file_patterns) if uri else CHECK
    if attach == SKIP:
        return not_a_config(text)
    if attach == NOTE:
        return not_a_config(text, check_text(text, path="<editor>", suggest_fixes=False))
    infile = read_file_settings(text)
    extra = [Diagnostic(SETTINGS_CODE, severity, message, hint=hint) for severity, message, hint in settings.problems]
    options: dict[str, Any] = {
        "allow_env": settings.allow_env,
        "suggest_fixes": with_fixes,
        **judged_release(settings, uri, infile),
    }
    profiles: tuple[Profile, ...] = ()
    if not infile.profiles:
        profiles = options["profiles"] = _editor_profiles(settings, extra)
    hardware, hardware_line = (infile.hardware, infile.hardware_line) if infile.hardware else (settings.hardware, None)
    if settings.world_size and not hardware:
        options["default_world_size"] = settings.world_size
    on_disk = _not_utf8_on_disk(uri, text)
    result = (
        check_text(on_disk, path="<editor>", **options)
        if on_disk is not None
        else _check(text, hardware, hardware_line, options, extra)
    )
    if infile.profiles:
        profiles = tuple(p for p in _known(infile.profiles))
    lines = split_lines(text)
    diagnostics = [to_lsp(d, lines) for d in extra + result.diagnostics]
    return Analysis(text, infile, result, diagnostics, with_fixes, profiles, _world_size_from(result, infile, hardware))


def _editor_profiles(settings: Settings, extra: list[Diagnostic]) -> tuple[Profile, ...]:
    """The editor's profiles (used when the file's `# grpo:` comment names none); an unknown one is a settings
    error added to `extra`, and none are used."""
    try:
        return resolve_profiles(settings.profiles)
    except (KeyError, ImportError, AttributeError, ValueError) as exc:
        from grpo_schema.engine.profiles import known_profiles

        extra.append(
            Diagnostic(
                SETTINGS_CODE,
                "error",
                f"unknown profile {exc} in the editor's settings",
                hint=f"known profiles: {', '.join(sorted(known_profiles()))}",
            )
        )
        return ()


def _not_utf8_on_disk(uri: str, text: str) -> bytes | None:
    """The file's bytes when the editor shows a file that is not UTF-8 (decoded as Latin-1, say): `grpo validate`
    and trl read those bytes, and refuse them, so the editor must say so too. Only a text with a character past
    ASCII can have come from such a file."""
    if not uri.startswith("file://") or text.isascii():
        return None
    from urllib.parse import unquote

    try:
        with open(unquote(uri.removeprefix("file://")), "rb") as handle:
            data = handle.read(2_000_000)
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    except OSError:
        pass
    return None


def judged_release(settings: Settings, uri: str, infile: FileSettings) -> dict[str, Any]:
    """The TRL release to judge by, in the order of every surface (grpo_schema.engine.infile.judged_release): the
    file's `# grpo: --trl-version` comment, else the editor's trlVersion (or `grpo lsp --trl-version`), else the trl
    installed beside the server, else a pin in the document's repository, else 1.16."""
    from grpo_schema.engine.infile import judged_release as ordered

    path = uri.removeprefix("file://") if uri.startswith("file://") else None
    return ordered(infile.trl_version, settings.trl_version, "editor settings", path)


def _known(names: tuple[str, ...]) -> list[Profile]:
    from grpo_schema.engine.profiles import get_profile

    found = []
    for name in names:
        try:
            found.append(get_profile(name, allow_import=False))
        except (KeyError, ImportError, AttributeError, ValueError):
            pass
    return found


def _world_size_from(result: CheckResult, infile: FileSettings, hardware: str | None) -> str:
    source = result.sources.get("world_size")
    if source == "comment":
        return f"`# grpo:` comment, line {infile.world_size_line}"
    if source == "editor settings":
        return "the editor's settings (the file declares none)"
    if source in (None, "command line") and hardware:  # the server passes no world size: the GPUs' count
        return f"the GPUs of `--hardware {hardware}`"
    return ""


def _check(
    text: str, hardware: str | None, hardware_line: int | None, options: dict[str, Any], extra: list[Diagnostic]
) -> CheckResult:
    result = check_text(text, path="<editor>", **options)
    # The fit when asked for (the comment's --hardware, or the editor's setting), as `grpo validate` and the
    # service check it; a hardware: section alone is for `grpo plan` and the form's memory bar.
    if not hardware or not result.raw:
        return result
    # The same path as `grpo validate --hardware`: the fit's diagnostics added to the check at that world size.
    from grpo_schema.commands.plan import check_for_hardware
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware

    if hardware:
        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            if hardware_line is not None:  # the comment's: what `grpo validate` says about it too
                extra.append(
                    Diagnostic(
                        codes.Y_COMMENT,
                        "warning",
                        f"`# grpo:` comment: --hardware {hardware!r}: {exc}",
                        line=hardware_line,
                        column=1,
                        hint=OPTIONS_HELP,
                    )
                )
            else:
                extra.append(
                    Diagnostic(SETTINGS_CODE, "error", f"hardware {hardware!r} in the editor's settings: {exc}")
                )
            return result
    # The hardware's GPUs set the world size when the file declares none: no editor default under them.
    fit_options = {k: v for k, v in options.items() if k not in ("suggest_fixes", "default_world_size")}
    fitted, report = check_for_hardware(text, "<editor>", hardware, batch_fixes=options["suggest_fixes"], **fit_options)
    fitted.diagnostics = fitted.diagnostics + report.diagnostics
    return finish(fitted)


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
    if lines and line >= len(lines):  # past the end of the file: the end of its last line
        line, column = len(lines) - 1, len(lines[-1])
    if diag.line is None:  # about the whole file (or a command-line value): the first line
        rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, utf16(lines[0], len(lines[0])) if lines else 0))
    else:
        rng = _in_utf16(lines, key_range(lines, line, column))
    message = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
    data = {
        "code": diag.code,
        "description": _description(diag.code),
        "fields": list(diag.fields),
        "hint": diag.hint,
        "fix": diag.fix.to_dict() if diag.fix else None,
        "alternatives": [alt.to_dict() for alt in diag.alternatives],
    }
    return lsp.Diagnostic(
        range=rng,
        message=message,
        severity=SEVERITY[diag.severity],
        code=diag.code,
        source=SOURCE,
        data=data,
        code_description=lsp.CodeDescription(href=CODES_URL),
    )


def _description(code: str) -> str:
    """What `grpo codes CODE` prints."""
    from grpo_schema.catalogue import all_codes
    from grpo_schema.engine.codes import CODES
    from grpo_schema.engine.rules import describe_code

    if code not in CODES:  # declared by a module nothing has imported yet (the registry imports them all)
        all_codes()
    return describe_code(code) if code in CODES else ""
