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
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grpo_schema.commands.options import EXIT_OK, EXIT_USAGE, UsageError, add_profiles, chosen_profiles, trl_options
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text
from grpo_schema.render.text import RELEASE_SOURCES

EXIT_CHANGES = 1  # a diff to apply, or a key that could not be migrated
# Why a release was chosen, in the words the text output uses (grpo_schema.versions.detect's sources).
SOURCES = {"flag": "--from"}
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
            lines = split_lines(text, keepends=True)
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
    lines = difflib.unified_diff(
        split_lines(old, keepends=True), split_lines(new, keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo migrate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description="Rewrite renamed and removed keys (and deprecated ones) for TRL 1.16, keeping comments, "
        "order and formatting. Prints a unified diff unless --write is given.",
    )
    parser.add_argument("paths", nargs="+", metavar="FILE", help="config files (YAML or JSON)")
    parser.add_argument("--write", action="store_true", help="write the migrated files in place")
    add_profiles(parser, help="treat a downstream project's script keys as known (e.g. open-r1)")
    parser.add_argument(
        "--from",
        dest="from_version",
        metavar="X.Y[.Z]",
        help="the TRL release the file was written for (default: the installed trl, else the "
        "repository's pin, else 1.16: only renamed and removed keys)",
    )
    parser.add_argument(
        "--to",
        dest="to_version",
        metavar="X.Y[.Z]",
        default=None,
        help="the release to migrate to: any release from the one the file is written for up to 1.16, the newest "
        "grpo-config knows (the default)",
    )
    return parser


def release_defaults_block(text: str, written_for: str, original: dict | None = None) -> tuple[str, list[str]]:
    """The text with the defaults of `written_for` that TRL 1.16 changed written out (for keys the file leaves
    out, before and after its migration: a key moved to its new name already carries the setting), and one line
    per key written."""
    from grpo_schema.engine.compiled import compiled
    from grpo_schema.engine.release import REFERENCE, release_defaults, release_surface

    release = release_surface(written_for)
    loaded = load_yaml(text)
    if release is None or not loaded.ok or not isinstance(loaded.data, dict):
        return text, []
    from grpo_schema.versions import surface

    done: list[str] = []
    failed: list[str] = []
    text = _batch_unit(text, {**(original or {}), **loaded.data}, release, surface(REFERENCE), done, failed)
    done += [f"could not rewrite {problem}" for problem in failed]
    model, facts = compiled("config"), compiled("config").fields
    lines = []
    written = {**(original or {}), **loaded.data}
    for name, value in release_defaults(release, written, facts).items():
        written = model.validate({name: value})[name]  # as TRL 1.16 reads it (true -> 'group' for scale_rewards)
        if written is None:
            continue  # no value to write that 1.16 reads as the old default
        if isinstance(written, float) and isinstance(value, int) and not isinstance(value, bool):
            written = value  # logging_steps: 500, not 500.0 (1.16 also takes a ratio there)
        what = (
            f"TRL {release.release}'s default"
            if name in release.fields
            else f"what TRL {release.release} did before {name} existed"
        )
        lines.append(
            f"{name}: {_yaml_scalar(written)}  # {what}; TRL 1.16's default is "
            f"{_yaml_scalar(facts[name].get('default'))}"
        )
        done.append(f"wrote {name}: {_yaml_scalar(written)} ({what})")
    if not lines:
        return text, done
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text if text.endswith(("\n", "\r\n")) or not text else text + newline
    block = [
        f"# Defaults of TRL {release.release} that TRL 1.16 changed, written out by grpo migrate so the run "
        "keeps its behaviour:"
    ] + lines
    return head + newline.join(block) + newline, done


def _yaml_scalar(value) -> str:
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def written_for(args: argparse.Namespace, path: str) -> dict:
    """The release the file was written for and where that came from ({"trl_version", "trl_version_source"}), or a
    UsageError."""
    return trl_options(args.from_version, path)


def target_release(to_version: str | None, from_version: str | None) -> str | None:
    """The release to migrate to (None: 1.16, the engine's own), or a UsageError: it must be a release the tables
    know and not older than the one the file is written for."""
    from grpo_schema.engine.release import REFERENCE
    from grpo_schema.versions import VersionError, newest, parse_version, surface

    if to_version is None:
        return None
    try:
        target = surface(to_version)
    except VersionError as exc:
        raise UsageError(f"--to: {exc}") from None
    if from_version is not None and parse_version(target.release)[:2] < parse_version(from_version)[:2]:
        raise UsageError(
            f"--to {to_version} is older than the release the file is written for (TRL {from_version}): "
            f"grpo migrate goes forward only, from {from_version} to any release up to {newest()}"
        )
    return None if parse_version(target.release)[:2] == parse_version(REFERENCE)[:2] else to_version


@dataclass
class Migrated:
    """A config rewritten for a target release: the new text, what was done, what could not be applied, and what the
    target release cannot keep of the old one's behaviour."""

    text: str
    done: list[str]
    failed: list[str]
    cannot_keep: list[str]
    written_for: str | None  # None: the file was already TRL 1.16's
    target: str  # the release written for


def migrate_config(
    text: str, path: str, profiles: list, from_release: str | None, to_release: str | None = None
) -> Migrated:
    """`grpo migrate --from A --to B` on one file's text. B None (or 1.16): the engine's own migrations and A's
    defaults that 1.16 changed; an older B: the renames, removals and changed defaults between A's and B's tables."""
    from grpo_schema.engine.release import REFERENCE
    from grpo_schema.engine.validate import check_text

    if to_release is not None:
        migrated = migrate_between(text, from_release or REFERENCE, to_release)
    else:
        loaded = load_yaml(text)
        # judged as 1.16 (the target), whatever the file's `# grpo: --trl-version` comment says; batch fixes: not ours
        checked = check_text(
            retarget_comments(text, REFERENCE),
            path=path,
            profiles=profiles,
            suggest_fixes=False,
            trl_version=REFERENCE,
            trl_version_source="flag",
        )
        new, done, failed = migrate_text(text, checked.diagnostics)
        new, defaults_done = release_defaults_block(new, from_release, loaded.data)
        migrated = Migrated(
            new, done + defaults_done, failed, cannot_keep(checked.diagnostics), from_release, REFERENCE
        )
    retargeted = retarget_comments(migrated.text, migrated.target)
    if retargeted != migrated.text:
        migrated.done.append(
            f"the file's `# grpo: --trl-version` comment or schema modeline now names TRL {migrated.target}"
        )
        migrated.text = retargeted
    return migrated


_TRL_VERSION_OPTION = re.compile(r"(--trl-version(?:=|\s+))(\S+)")
_SCHEMA_NAME = re.compile(r"(?:trl-\d+\.\d+\.\d+/)?(grpo-config(?:\.[\w-]+)*\.schema\.json)")


def _same_table(version: str, target: str) -> bool:
    """Whether `version` is judged by the same table as `target` (then a comment naming it stays as written)."""
    import warnings

    from grpo_schema.versions import VersionError, surface

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return surface(version).release == surface(target).release
        except VersionError:
            return False


def retarget_comments(text: str, target: str) -> str:
    """The file's own statements of its release, moved to `target`: `--trl-version A` in a `# grpo:` comment, and
    a yaml-language-server modeline naming grpo-config's schema, which then names `target`'s schema
    (schemas/trl-X.Y.Z/grpo-config.schema.json for an older release, the main schema for 1.16)."""
    from grpo_schema.api.modeline import MODELINE_PREFIX, SCHEMA_FILE
    from grpo_schema.commands.export import release_schema_name
    from grpo_schema.engine.infile import COMMENT, comment_lines

    schema = release_schema_name(target)
    directives = {number for number, line in comment_lines(text) if COMMENT.match(line)}  # not a script's text
    out = []
    for number, line in enumerate(split_lines(text, keepends=True), start=1):
        if number in directives:
            line = _TRL_VERSION_OPTION.sub(
                lambda m: m.group(0) if _same_table(m.group(2), target) else m.group(1) + target, line
            )
        elif line.lstrip().startswith(MODELINE_PREFIX) and SCHEMA_FILE.removesuffix(".schema.json") in line:
            # only the strict main schema has a per-release copy; a variant (lenient, open-r1, draft-07) stays
            line = _SCHEMA_NAME.sub(lambda m: schema if m.group(1) == SCHEMA_FILE else m.group(0), line)
        out.append(line)
    return "".join(out)


def migrate_between(text: str, from_release: str, to_release: str) -> Migrated:
    """From release A to an older-than-1.16 release B, with both releases' own tables: a key B reads under a new
    name is renamed, a key B does not read is removed (and listed: B cannot keep it), and every default that changed
    between A and B for a key the file leaves out is written out as A's value."""
    from grpo_schema.versions import diff, surface

    a, b = surface(from_release), surface(to_release)
    changes = diff(a, b)
    loaded = load_yaml(text)
    data = dict(loaded.data) if isinstance(loaded.data, dict) else {}
    done, failed, lost = [], [], []
    renamed = dict(changes.renamed)
    for key in list(data):
        if key == "env" or key in b.fields or key not in a.fields:
            continue  # kept; a key neither release reads is grpo validate's to report
        new_name = renamed.get(key)
        if new_name is not None:
            fix = (
                Fix(unset=(key,), safe=True, title=f"remove {key} ({new_name} is set)")
                if new_name in data
                else Fix(rename={key: new_name}, safe=True, title=f"rename {key} to {new_name}")
            )
        else:
            note = MIGRATIONS[key].note if key in MIGRATIONS else "no key of that release carries the setting"
            fix = Fix(unset=(key,), safe=False, title=f"remove {key}")
            lost.append(f"{key}: TRL {b.release} does not read it ({note})")
        try:
            text = apply_fix_to_text(text, fix)
        except EditError as exc:
            failed.append(f"{key}: {exc}")
            continue
        done.append(fix.title)
    text = _batch_unit(text, data, a, b, done, failed)
    kept = {**data, **{new: data[old] for old, new in renamed.items() if old in data}}
    lines = []
    for name, value in carried_defaults(a, b, kept).items():
        lines.append(
            f"{name}: {_yaml_scalar(value)}  # {_what(a, name)}; TRL {b.release}'s default is "
            f"{_yaml_scalar(_plain_default(b.fields[name]))}"
        )
        done.append(f"wrote {name}: {_yaml_scalar(value)} ({_what(a, name)})")
    text = _append_block(
        text,
        f"# Defaults of TRL {a.release} that TRL {b.release} changed, written out by grpo "
        "migrate so the run keeps its behaviour:",
        lines,
    )
    return Migrated(text, done, failed, lost, from_release, b.release)


def _batch_unit(text: str, data: dict, a, b, done: list[str], failed: list[str]) -> str:
    """A per_device_train_batch_size in prompts (TRL 0.14) written in completions for B: the same run trains on
    per_device_train_batch_size x num_generations completions per process per micro-step."""
    if a.batch.unit == b.batch.unit or a.batch.unit != "prompts":
        return text
    b_info, g_info = a.fields["per_device_train_batch_size"], a.fields["num_generations"]
    prompts, groups = (
        data.get("per_device_train_batch_size", b_info.default),
        data.get("num_generations", g_info.default),
    )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (prompts, groups)):
        return text  # a value the checker reports on its own
    title = (
        f"per_device_train_batch_size: {prompts} -> {prompts * groups} (TRL {a.release} counted prompts, "
        f"TRL {b.release} counts completions: {prompts} x num_generations {groups})"
    )
    try:
        text = apply_fix_to_text(
            text, Fix(set={"per_device_train_batch_size": prompts * groups}, safe=True, title=title)
        )
    except EditError as exc:
        failed.append(f"per_device_train_batch_size: {exc}")
        return text
    done.append(title)
    return text


def carried_defaults(a, b, mapping: dict) -> dict:
    """For keys the file leaves out: A's value where B's default differs (and B's types can hold it), and what A did
    before a key existed (grpo_schema.engine.release.BEFORE_THE_KEY) where B's default is something else."""
    from grpo_schema.engine.release import before_the_key

    out = {}
    for name, info in b.fields.items():
        if name in mapping or info.required or info.default_expr is not None:
            continue
        old = a.fields.get(name)
        if old is None:
            value = before_the_key(a).get(name)
            if value is None or _same_setting(name, value, _plain_default(info)):
                continue
        else:
            if old.required or old.default_expr is not None:
                continue
            value = old.default
            if _same_setting(name, value, _plain_default(info)):
                continue
        if value is None and not info.nullable:
            continue  # nothing B's types take that means A's 'unset'
        out[name] = _as_written_for(info, value)
    return out


def _plain_default(info):
    return None if info.required else info.default


def _same_setting(name: str, x, y) -> bool:
    from grpo_schema.engine.release import _off

    x, y = (_scale_word(v) if name == "scale_rewards" else v for v in (x, y))
    if isinstance(x, bool) or isinstance(y, bool):
        return (type(x) is type(y) and x == y) or (_off(x) and _off(y))
    return bool(x == y) or (_off(x) and _off(y))


def _scale_word(value):
    return {True: "group", False: "none"}.get(value, value) if isinstance(value, bool) else value


def _as_written_for(info, value):
    """A's value in B's type (a boolean scale_rewards becomes the word B reads it as)."""
    if info.type == "str" and isinstance(value, bool):
        return _scale_word(value)
    return value


def _what(a, name: str) -> str:
    return f"TRL {a.release}'s default" if name in a.fields else f"what TRL {a.release} did before {name} existed"


def _append_block(text: str, heading: str, lines: list[str]) -> str:
    if not lines:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text if text.endswith(("\n", "\r\n")) or not text else text + newline
    return head + newline.join([heading, *lines]) + newline


def migrate_command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    status = EXIT_OK
    for path in args.paths:
        if path.endswith((".py", ".ipynb")):  # GRPOConfig(...) keywords rewritten where they are written
            found = _migrate_python(path, args)
            if found == EXIT_USAGE:
                return EXIT_USAGE
            status = max(status, found)
            continue
        try:
            text = Path(path).read_bytes().decode("utf-8")  # bytes: keep CRLF line ends as they are
            profiles = chosen_profiles(args.profile)
        except (OSError, UnicodeDecodeError, UsageError) as exc:
            print(f"grpo migrate: error: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return EXIT_USAGE
        loaded = load_yaml(text)
        if not loaded.ok or not isinstance(loaded.data, dict):
            print(f"grpo migrate: error: {path} is not a YAML mapping; run grpo validate {path}", file=sys.stderr)
            return EXIT_USAGE
        try:
            found = written_for(args, path)
            old_release = found["trl_version"]
            new_release = target_release(args.to_version, old_release)
        except (UsageError, ValueError) as exc:
            print(f"grpo migrate: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        migrated = migrate_config(text, path, profiles, old_release, new_release)
        why = SOURCES.get(found["trl_version_source"]) or RELEASE_SOURCES.get(found["trl_version_source"], "")
        print(
            f"{path}: written for TRL {old_release} ({why}); migrated to TRL {migrated.target}"
            + (" (--to)" if args.to_version else " (the default target)"),
            file=sys.stderr,
        )
        new, done, failed = migrated.text, migrated.done, migrated.failed
        for line in migrated.cannot_keep:
            print(f"{path}: cannot keep: {line}", file=sys.stderr)
        for line in failed:
            print(f"{path}: not migrated: {line}", file=sys.stderr)
        if args.write:
            if new != text:
                Path(path).write_bytes(new.encode("utf-8"))
                print(f"{path}: {len(done)} change{'s' if len(done) != 1 else ''}: " + "; ".join(done), file=sys.stderr)
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
        elif new != text:
            sys.stdout.write(unified_diff(text, new, path))
            status = EXIT_CHANGES
        else:
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
    return status


def _migrate_python(path: str, args: argparse.Namespace) -> int:
    from grpo_schema.dialects.python.migrate import migrate_python

    try:
        data = Path(path).read_bytes()
        target = target_release(args.to_version, None) or "1.16.0"
        migrated = migrate_python(data, path, trl_version=target, trl_version_source="flag")
    except (OSError, UnicodeDecodeError, ValueError, UsageError) as exc:
        print(f"grpo migrate: error: {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return EXIT_USAGE
    text = data.decode("utf-8")
    for line in migrated.failed:
        print(f"{path}: not migrated: {line}", file=sys.stderr)
    if migrated.text == text:
        return EXIT_CHANGES if migrated.failed else EXIT_OK
    if args.write:
        Path(path).write_bytes(migrated.text.encode("utf-8"))
        print(
            f"{path}: {len(migrated.done)} change{'s' if len(migrated.done) != 1 else ''}: " + "; ".join(migrated.done),
            file=sys.stderr,
        )
        return EXIT_CHANGES if migrated.failed else EXIT_OK
    sys.stdout.write(unified_diff(text, migrated.text, path))
    return EXIT_CHANGES
