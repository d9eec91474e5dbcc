"""Export for the form: the edited config as YAML, written into the imported file when there is one.

When the form started from a file, the export is that file with the form's edits made in place through
grpo_schema.engine.yamledit (the engine behind `grpo migrate` and `grpo validate --fix`): renames keep their line,
removed keys leave their comments, changed values are rewritten on their own line, new keys are appended. Values
the form did not change are not rewritten, so `1.0` stays `1.0` and every comment and key order stays. Without a
file, or when an edit cannot be made in the text, the canonical writer (grpo_web.yamltext) writes the whole config.
Either way the first line is the schema modeline for editors (added above an imported file that has none).

`world_size`: the toolbar's world size. Written as `num_processes` (the key `accelerate launch`, `grpo validate`
and `grpo launch` read) unless the caller asks not to; either way a note says what the file declares (a
`# grpo: --world-size N` comment counts: `grpo validate` reads it).

Comments that state numbers (a recipe's "# World size: 8 training processes", "4 x 8 x 2 = 64 completions") are
kept only while the values they describe are unchanged: a comment block attached to a key whose value the form
changed, or naming such a key, and holding a number, is dropped, and a note says so. A modeline that names the
schema by a relative path (which resolves only beside the schema file) is replaced by `schema_url`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.api.modeline import MODELINE_PREFIX, modeline
from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.infile import read_file_settings
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text
from grpo_web.yamltext import config_body, config_yaml


@dataclass
class Exported:
    yaml: str
    notes: list[str] = field(default_factory=list)
    kept_source: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"yaml": self.yaml, "notes": self.notes, "kept_source": self.kept_source}


def same_value(a: Any, b: Any) -> bool:
    """Equal as the form sees values: 1 and 1.0 are the same number (JSON cannot tell them apart), but a boolean
    is never a number, and containers compare item by item (and key order of nested mappings counts)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def with_world_size(
    config: dict[str, Any], world_size: int | None, write: bool, commented: int | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The config with num_processes for the toolbar's world size (when asked), and what the file declares.
    `commented`: the world size of the file's `# grpo: --world-size N` comment, if any."""
    declared = config.get("num_processes")
    if world_size is None:
        if commented is not None:
            return config, [
                f"World size {commented}: the file's `# grpo: --world-size {commented}` comment declares "
                f"it (grpo validate reads it; pass --num_processes {commented} to accelerate launch)."
            ]
        if isinstance(declared, int) and not isinstance(declared, bool):
            return config, [f"World size {declared}: num_processes is in the file."]
        return config, ["No world size in the file: grpo validate and accelerate launch assume 1 process."]
    if declared == world_size:
        return config, [f"World size {world_size}: num_processes is in the file."]
    if write:
        return {**config, "num_processes": world_size}, [
            f"num_processes: {world_size} written for the toolbar's world size (grpo validate, grpo launch and "
            "accelerate launch read it)."
        ]
    current = f"num_processes: {declared}" if declared is not None else "no num_processes (1 process)"
    return config, [
        f"The toolbar's world size {world_size} is NOT in this file ({current}): pass "
        f"--world-size {world_size} to grpo validate and --num_processes {world_size} to accelerate "
        "launch."
    ]


def edit_of(old: dict[str, Any], new: dict[str, Any], renames: dict[str, str]) -> Fix:
    """The one Fix that turns the file's mapping into the form's (renames first, as the form applied them)."""
    rename = {a: b for a, b in renames.items() if a in old and a not in new and b in new and b not in old}
    after = {rename.get(k, k): v for k, v in old.items()}
    unset = tuple(k for k in after if k not in new)
    changed = {k: v for k, v in new.items() if k not in after or not same_value(after[k], v)}
    return Fix(rename=rename, unset=unset, set=changed, safe=True, title="the form's edits")


# Keys whose values the batch arithmetic in a comment is made of: a comment that computes with one of them
# ("4 x 8 x 2 = 64") describes them all.
BATCH_KEYS = frozenset(
    {
        "per_device_train_batch_size",
        "num_processes",
        "gradient_accumulation_steps",
        "num_generations",
        "steps_per_generation",
        "generation_batch_size",
    }
)
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?:\s|$)")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d")
_ARITHMETIC = re.compile(r"\d\s*(?:x|\u00d7|\*|/|=)\s*\d")
_WORLD_WORDS = re.compile(r"world size|\bGPUs?\b|training process", re.IGNORECASE)


def _trailing_comment(line: str) -> int | None:
    """Where a `# comment` after a plain value starts on a `key: value` line, or None (quotes are respected)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and i > 0 and line[i - 1] in " \t":
            return i
    return None


def _keys_named(text: str, known: set[str]) -> set[str]:
    named = {word for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if word in known}
    if _WORLD_WORDS.search(text):
        named.add("num_processes")
    if named & BATCH_KEYS and _ARITHMETIC.search(text):
        named |= BATCH_KEYS
    return named


def stale_comments(source: str, changed: set[str], known: set[str]) -> list[tuple[int, int | None]]:
    """The comments of `source` whose numbers describe values the form changed: (line index, column) pairs,
    column None for a whole comment line, else where a trailing comment starts. A block of comment lines goes
    with the key right below it (no blank line between); a block at the top of the file, before the first key,
    is judged line by line (a recipe's title and description stay unless a line of it is stale)."""
    lines = source.split("\n")
    stale: list[tuple[int, int | None]] = []
    block: list[int] = []
    seen_key = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("#"):
            if not stripped.startswith(MODELINE_PREFIX) and not stripped.startswith("# grpo:"):
                block.append(index)
            continue
        key = _TOP_KEY.match(line)
        if block:
            text = " ".join(lines[i] for i in block)
            if not seen_key:  # the file's header: line by line, attached to no key
                stale += [
                    (i, None) for i in block if _NUMBER.search(lines[i]) and _keys_named(lines[i], known) & changed
                ]
            elif _NUMBER.search(text) and (_keys_named(text, known) | ({key.group(1)} if key else set())) & changed:
                stale += [(i, None) for i in block]
            block = []
        if key:
            seen_key = True
            at = _trailing_comment(line)
            if (
                at is not None
                and _NUMBER.search(line[at:])
                and (_keys_named(line[at:], known) | {key.group(1)}) & changed
            ):
                stale.append((index, at))
    return stale


def drop_comments(source: str, stale: list[tuple[int, int | None]]) -> str:
    lines = source.split("\n")
    for index, column in sorted(stale, reverse=True):
        if column is None:
            del lines[index]
        else:
            lines[index] = lines[index][:column].rstrip()
    return "\n".join(lines)


def _relative_modeline(line: str) -> bool:
    """A modeline naming its schema by a relative path: it resolves only beside that file, not in a download."""
    if not line.startswith(MODELINE_PREFIX):
        return False
    target = line[len(MODELINE_PREFIX) :].strip()
    return not re.match(r"^[a-z][a-z0-9+.-]*://", target) and not target.startswith("/")


def export_config(
    config: dict[str, Any],
    schema_url: str,
    source: str | None = None,
    renames: dict[str, str] | None = None,
    world_size: int | None = None,
    write_world_size: bool = True,
    source_kind: str = "file",
    source_name: str | None = None,
    known_keys: set[str] | None = None,
) -> Exported:
    """`source_kind`: where `source` came from, "file" (imported) or "recipe" (a recipe the form started from,
    named `source_name`); the notes say which."""
    bom = "\ufeff" if source and source.startswith("\ufeff") else ""  # stays the file's first character, above
    source = source[len(bom) :] if source else source  # the modeline: a BOM inside a YAML file is a syntax error
    commented = read_file_settings(source).world_size if source else None
    config, notes = with_world_size(config, world_size, write_world_size, commented)
    if source:
        loaded = load_yaml(source)
        if loaded.ok and isinstance(loaded.data, dict):
            try:
                fix = edit_of(loaded.data, config, renames or {})
                changed = set(fix.set) | set(fix.unset)
                stale = stale_comments(source, changed, set(known_keys or ()) | set(loaded.data) | set(config))
                text = apply_fix_to_text(drop_comments(source, stale) if stale else source, fix)
                first = text.split("\n", 1)[0]
                eol = "\r\n" if "\r\n" in source else "\n"  # the file's own line ending: never a mixed file
                if _relative_modeline(first.rstrip("\r")):  # editors find the schema from it, wherever it is saved
                    text = modeline(schema_url) + eol + text.split("\n", 1)[1]
                elif "yaml-language-server:" not in first:
                    text = modeline(schema_url) + eol + text
                what = (
                    "Written into the recipe's text" + (f" ({source_name})" if source_name else "")
                    if source_kind == "recipe"
                    else "Written into the imported file"
                )
                kept = [f"{what}: its comments and key order are kept."]
                if stale:
                    kept.append(
                        f"Dropped {len(stale)} comment line{'s' if len(stale) != 1 else ''} whose numbers "
                        "described values changed since (they would contradict the file)."
                    )
                return Exported(bom + text, [*kept, *notes], kept_source=True)
            except (EditError, TypeError, ValueError) as exc:  # EditError says why
                notes.insert(
                    0,
                    f"The {'recipe' if source_kind == 'recipe' else 'imported file'}'s comments could "
                    f"not be kept ({exc}); the config is written anew.",
                )
        else:
            notes.insert(0, "The imported text is not a YAML mapping; the config is written anew.")
    return Exported(config_yaml(config, schema_url), notes)


def config_text(config: dict[str, Any], source: str | None = None, renames: dict[str, str] | None = None) -> str:
    """The form's config as the file a command reads: the imported text with the form's edits made in place (its
    comments and key order kept), else the config written anew (no modeline: nothing is downloaded)."""
    if source:
        loaded = load_yaml(source)
        if loaded.ok and isinstance(loaded.data, dict):
            try:
                return apply_fix_to_text(source, edit_of(loaded.data, config, renames or {}))
            except (EditError, TypeError, ValueError):
                pass  # an edit the text cannot take: the config is written anew
    return config_body(config)


def migrate_form_config(
    config: dict[str, Any],
    source: str | None,
    renames: dict[str, str] | None,
    written_for: str,
    target: str | None,
    profiles: tuple = (),
) -> dict[str, Any]:
    """`grpo migrate --from written_for [--to target]` on the form's config (the engine's migrate_config, so the
    form and the CLI write the same file): the migrated text and mapping, what was done, what failed and what the
    target release cannot keep. A release that cannot be judged, or a target older than `written_for`, is a
    ValueError."""
    from grpo_schema.commands.migrate import migrate_config, target_release
    from grpo_schema.commands.options import UsageError
    from grpo_schema.versions import VersionError, parse_version

    try:
        parse_version(written_for)
        to_release = target_release(target, written_for)
    except (UsageError, VersionError) as exc:
        raise ValueError(str(exc)) from None
    migrated = migrate_config(config_text(config, source, renames), "<form>", list(profiles), written_for, to_release)
    loaded = load_yaml(migrated.text)
    return {
        "yaml": migrated.text,
        "config": loaded.data if loaded.ok else None,
        "done": migrated.done,
        "failed": migrated.failed,
        "cannot_keep": migrated.cannot_keep,
        "written_for": written_for,
        "target": migrated.target,
    }
