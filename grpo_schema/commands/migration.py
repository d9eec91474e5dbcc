"""One migration for every surface (`grpo migrate`, the editor's action, the form's offer): migrate_config moves a
config's text from the release it was written for to a target release, keeping what it did."""

from __future__ import annotations

from grpo_schema.commands.migration_between import Migrated, batch_unit, migrate_between, yaml_scalar
from grpo_schema.commands.migration_comments import retarget_comments
from grpo_schema.commands.migration_text import cannot_keep, migrate_text
from grpo_schema.engine.loader import load_yaml


def migrate_config(
    text: str, path: str, profiles: list, from_release: str | None, to_release: str | None = None
) -> Migrated:
    """`grpo migrate --from A --to B` on one file's text. B None (or 1.16): the engine's own migrations and A's
    defaults that 1.16 changed. An older B: the renames, removals and changed defaults between A's and B's tables,
    then the engine's own migrations at B for what is left of keys B does not read (A = B: those alone, as at 1.16
    when A is 1.16), so a file whose keys predate the release it is judged for moves to that release."""
    from grpo_schema.engine.release import REFERENCE

    if to_release is None:
        new, done, failed, lost = judged_migration(text, path, profiles, REFERENCE)
        new, defaults_done = release_defaults_block(new, from_release, load_yaml(text).data)
        migrated = Migrated(new, done + defaults_done, failed, lost, from_release, REFERENCE)
    else:
        migrated = migrate_between(text, from_release or REFERENCE, to_release)
        new, done, failed, lost = judged_migration(migrated.text, path, profiles, migrated.target)
        migrated.text, migrated.done, migrated.failed = new, migrated.done + done, migrated.failed + failed
        migrated.cannot_keep += [line for line in lost if line not in migrated.cannot_keep]
    retargeted = retarget_comments(migrated.text, migrated.target)
    if retargeted != migrated.text:
        migrated.done.append(
            f"the file's `# grpo: --trl-version` comment or schema modeline now names TRL {migrated.target}"
        )
        migrated.text = retargeted
    return migrated


def judged_migration(text: str, path: str, profiles: list, release: str) -> tuple[str, list[str], list[str], list[str]]:
    """The engine's migration fixes for the file judged at `release` (the target), whatever its `# grpo:
    --trl-version` comment says; batch fixes are not a migration's, nor an older release's own deprecations (it
    still reads those keys). (new text, done, failed, cannot keep)."""
    from grpo_schema.engine.release import REFERENCE
    from grpo_schema.engine.validate import check_text

    checked = check_text(
        retarget_comments(text, release),
        path=path,
        profiles=profiles,
        suggest_fixes=False,
        trl_version=release,
        trl_version_source="flag",
    )
    new, done, failed = migrate_text(text, checked.diagnostics, deprecations=release == REFERENCE)
    return new, done, failed, cannot_keep(checked.diagnostics)


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
    text = batch_unit(text, {**(original or {}), **loaded.data}, release, surface(REFERENCE), done, failed)
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
            f"{name}: {yaml_scalar(written)}  # {what}; TRL 1.16's default is {yaml_scalar(facts[name].get('default'))}"
        )
        done.append(f"wrote {name}: {yaml_scalar(written)} ({what})")
    if not lines:
        return text, done
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text if text.endswith(("\n", "\r\n")) or not text else text + newline
    block = [
        f"# Defaults of TRL {release.release} that TRL 1.16 changed, written out by grpo migrate so the run "
        "keeps its behaviour:"
    ] + lines
    return head + newline.join(block) + newline, done
