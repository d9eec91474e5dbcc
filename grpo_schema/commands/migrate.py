"""`grpo migrate FILE... [--from A] [--to 1.16] [--write]`: rewrite a config for TRL 1.16, keeping what it did.

Applies the edit of every migration in grpo_schema.engine.migrations (GRPO-K002 renamed, GRPO-K003 removed) and of the
deprecations that carry a fix (GRPO-D...). The file is edited in place of the old keys only: comments, key order
and formatting stay. A removal that needs a person's decision (e.g. vllm_device -> vllm_mode) is still made,
since TRL 1.16 refuses the old key, but a comment takes the old line's place saying what to decide.

A config written for an older release (`--from`, else the installed trl or the repository's pin) also gets that
release's defaults written out where TRL 1.16 changed them (loss_type bnpo for 0.19, beta 0.04 for 0.16, ...), each
with a comment, so that the migrated run trains as the old one did; what 1.16 cannot keep (a prompt truncation
that 1.16 no longer does) is listed.
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


def cannot_keep(diagnostics: list[Diagnostic]) -> list[str]:
    """What TRL 1.16 cannot do as the old release did: keys removed without a successor that carries the setting."""
    out = []
    for diag in diagnostics:
        key = diag.fields[0] if diag.fields else ""
        migration = MIGRATIONS.get(key)
        if diag.code == "GRPO-K003" and migration is not None and (not migration.safe or not migration.replacement):
            out.append(f"{key}: {migration.note}")
    return out


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
    parser.add_argument("--from", dest="from_version", metavar="X.Y[.Z]",
                        help="the TRL release the file was written for (default: the installed trl, else the "
                             "repository's pin, else 1.16: only renamed and removed keys)")
    parser.add_argument("--to", dest="to_version", metavar="X.Y[.Z]", default=None,
                        help="the release to migrate to: 1.16, the newest release grpo-config knows (the default)")
    return parser


def release_defaults_block(text: str, written_for: str, original: dict | None = None) -> tuple[str, list[str]]:
    """The text with the defaults of `written_for` that TRL 1.16 changed written out (for keys the file leaves
    out, before and after its migration: a key moved to its new name already carries the setting), and one line
    per key written."""
    from grpo_schema.engine.compiled import compiled
    from grpo_schema.engine.release import release_defaults, release_surface

    release = release_surface(written_for)
    loaded = load_yaml(text)
    if release is None or not loaded.ok or not isinstance(loaded.data, dict):
        return text, []
    model, facts = compiled("config"), compiled("config").fields
    lines, done = [], []
    written = {**(original or {}), **loaded.data}
    for name, value in release_defaults(release, written, facts).items():
        written = model.validate({name: value})[name]  # as TRL 1.16 reads it (true -> 'group' for scale_rewards)
        if written is None:
            continue  # no value to write that 1.16 reads as the old default
        if isinstance(written, float) and isinstance(value, int) and not isinstance(value, bool):
            written = value  # logging_steps: 500, not 500.0 (1.16 also takes a ratio there)
        what = (f"TRL {release.release}'s default" if name in release.fields
                else f"what TRL {release.release} did before {name} existed")
        lines.append(f"{name}: {_yaml_scalar(written)}  # {what}; TRL 1.16's default is "
                     f"{_yaml_scalar(facts[name].get('default'))}")
        done.append(f"wrote {name}: {_yaml_scalar(written)} ({what})")
    if not lines:
        return text, []
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text if text.endswith(("\n", "\r\n")) or not text else text + newline
    block = [f"# Defaults of TRL {release.release} that TRL 1.16 changed, written out by grpo migrate so the run "
             "keeps its behaviour:"] + lines
    return head + newline.join(block) + newline, done


def _yaml_scalar(value) -> str:
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def written_for(args: argparse.Namespace, path: str) -> str | None:
    """The release the file was written for (None: 1.16), or a UsageError."""
    from grpo_schema.cli import UsageError, trl_options
    from grpo_schema.versions import newest, parse_version

    if args.to_version is not None and parse_version(args.to_version)[:2] != parse_version(newest())[:2]:
        raise UsageError(f"--to {args.to_version}: grpo migrate writes configs for TRL {newest()} (the newest "
                         "release it knows); validate for an older release with grpo validate --trl-version")
    found = trl_options(args.from_version, path)
    return found["trl_version"]


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
        try:
            old_release = written_for(args, path)
        except (UsageError, ValueError) as exc:
            print(f"grpo migrate: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        checked = check_text(text, path=path, profiles=profiles, suggest_fixes=False)  # batch fixes: not ours
        new, done, failed = migrate_text(text, checked.diagnostics)
        new, defaults_done = release_defaults_block(new, old_release, loaded.data)
        done += defaults_done
        for line in cannot_keep(checked.diagnostics):
            print(f"{path}: cannot keep: {line}", file=sys.stderr)
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
