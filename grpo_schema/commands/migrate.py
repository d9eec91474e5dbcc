"""`grpo migrate FILE... [--write]`: rewrite renamed and removed keys (and deprecated ones) for TRL 1.16.

Applies the edit of every migration in grpo_schema.engine.migrations (GRPO-K002 renamed, GRPO-K003 removed) and of the
deprecations that carry a fix (GRPO-D...). The file is edited in place of the old keys only: comments, key order
and formatting stay. A removal that needs a person's decision (e.g. vllm_device -> vllm_mode) is still made,
since TRL 1.16 refuses the old key, but a comment takes the old line's place saying what to decide.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text

EXIT_OK, EXIT_CHANGES, EXIT_USAGE = 0, 1, 2
MIGRATION_CODES = ("GRPO-K002", "GRPO-K003", "GRPO-K008")  # K008: a profile key nothing reads
EPILOG = """exit status:
  0  nothing to migrate (or, with --write, every migration was written)
  1  without --write: the files need migrating (the diff is printed); with --write: some migration could not be
     applied automatically (the reason is printed)
  2  bad usage, or a file that cannot be read or is not a YAML mapping"""


def migration_fixes(diagnostics: list[Diagnostic]) -> list[tuple[Diagnostic, Fix]]:
    """The edits migrate makes: every migration fix (safe or not) and every deprecation fix."""
    out = []
    for diag in diagnostics:
        wanted = diag.code in MIGRATION_CODES or diag.code.startswith("GRPO-D")
        if wanted and diag.fix is not None and all(fix != diag.fix for _, fix in out):
            out.append((diag, diag.fix))
    return out


def _decision_comment(text: str, fix: Fix) -> tuple[int, str] | None:
    """For a removal that needs a person: (0-based line of the removed key, the comment that replaces it)."""
    key = next((k for k in fix.unset if k in MIGRATIONS and not MIGRATIONS[k].safe), None)
    loaded = load_yaml(text)
    position = loaded.positions.keys.get((key,)) if key else None
    if position is None:
        return None
    value = loaded.data.get(key)
    return position[0] - 1, f"# grpo migrate removed `{key}: {value}`: {MIGRATIONS[key].note}"


def migrate_text(text: str, diagnostics: list[Diagnostic]) -> tuple[str, list[str], list[str]]:
    """(new text, what was done, what could not be done), one edit at a time, each verified by yamledit."""
    done, failed = [], []
    for diag, fix in migration_fixes(diagnostics):
        decision = _decision_comment(text, fix) if not fix.safe else None
        try:
            text = apply_fix_to_text(text, fix)
        except EditError as exc:
            failed.append(f"{diag.code} {diag.fields[0] if diag.fields else ''}: {exc}")
            continue
        if decision is not None:
            lines = text.splitlines(keepends=True)
            newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
            lines.insert(decision[0], decision[1] + newline)
            text = "".join(lines)
        done.append(f"{diag.code} {fix.title}" + ("" if fix.safe else " (review: see the comment left in the file)"))
    return text, done, failed


def unified_diff(old: str, new: str, path: str) -> str:
    name = path.lstrip("/")
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{name}",
                                 tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo migrate", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Rewrite renamed and removed keys (and deprecated ones) for TRL 1.16, keeping comments, "
                    "order and formatting. Prints a unified diff unless --write is given.")
    parser.add_argument("paths", nargs="+", metavar="FILE", help="config files (YAML or JSON)")
    parser.add_argument("--write", action="store_true", help="write the migrated files in place")
    parser.add_argument("--profile", action="append", default=[], metavar="NAME",
                        help="treat a downstream project's script keys as known (e.g. open-r1)")
    return parser


def migrate_command(argv: list[str]) -> int:
    from grpo_schema.engine.validate import check_text
    from grpo_schema.cli import UsageError, _profiles

    args = build_parser().parse_args(argv)
    status = EXIT_OK
    for path in args.paths:
        try:
            text = Path(path).read_bytes().decode("utf-8")  # bytes: keep CRLF line ends as they are
            profiles = _profiles(args.profile)
        except (OSError, UnicodeDecodeError, UsageError) as exc:
            print(f"grpo migrate: error: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return EXIT_USAGE
        loaded = load_yaml(text)
        if not loaded.ok or not isinstance(loaded.data, dict):
            print(f"grpo migrate: error: {path} is not a YAML mapping; run grpo validate {path}", file=sys.stderr)
            return EXIT_USAGE
        checked = check_text(text, path=path, profiles=profiles, suggest_fixes=False)  # batch fixes: not ours
        new, done, failed = migrate_text(text, checked.diagnostics)
        for line in failed:
            print(f"{path}: not migrated: {line}", file=sys.stderr)
        if args.write:
            if new != text:
                Path(path).write_bytes(new.encode("utf-8"))
                print(f"{path}: {len(done)} change{'s' if len(done) != 1 else ''}: " + "; ".join(done),
                      file=sys.stderr)
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
        elif new != text:
            sys.stdout.write(unified_diff(text, new, path))
            status = EXIT_CHANGES
        else:
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
    return status
