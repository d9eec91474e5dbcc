"""`grpo migrate --from A --to B` for a target B older than 1.16, from both releases' own tables: keys B reads under
a new name renamed, keys B does not read removed (and listed: B cannot keep them), a batch size counted in prompts
written in completions, and every default that changed between A and B written out as A's value."""

from __future__ import annotations

from dataclasses import dataclass

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text


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
    text = batch_unit(text, data, a, b, done, failed)
    kept = {**data, **{new: data[old] for old, new in renamed.items() if old in data}}
    lines = []
    for name, value in carried_defaults(a, b, kept).items():
        lines.append(
            f"{name}: {yaml_scalar(value)}  # {_what(a, name)}; TRL {b.release}'s default is "
            f"{yaml_scalar(_plain_default(b.fields[name]))}"
        )
        done.append(f"wrote {name}: {yaml_scalar(value)} ({_what(a, name)})")
    text = append_block(
        text,
        f"# Defaults of TRL {a.release} that TRL {b.release} changed, written out by grpo "
        "migrate so the run keeps its behaviour:",
        lines,
    )
    return Migrated(text, done, failed, lost, from_release, b.release)


def batch_unit(text: str, data: dict, a, b, done: list[str], failed: list[str]) -> str:
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


def append_block(text: str, heading: str, lines: list[str]) -> str:
    if not lines:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    head = text if text.endswith(("\n", "\r\n")) or not text else text + newline
    return head + newline.join([heading, *lines]) + newline


def yaml_scalar(value) -> str:
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()
