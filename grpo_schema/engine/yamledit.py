"""Apply `Fix` edits to a mapping, and to YAML text without disturbing anything else in the file.

`apply_fix(mapping, fix)` is the meaning of a fix: rename keys in place, unset keys, set values ("env.NAME" reaches
into the env section). `apply_fix_to_text(text, fix)` makes the same edit in the file itself: it composes the text
into YAML nodes (no values are built) for the exact spans of keys and values, and rewrites only those spans and
lines. Comments, blank lines, key order, quoting and indentation elsewhere stay byte for byte; a comment on a
removed line is kept on a line of its own. Every text edit is checked: the edited text is loaded again (with the
validator's own loader) and must equal `apply_fix(original)`, else `EditError` is raised and the text is left alone.

Why not a ruamel.yaml load-and-dump round trip: on the 61 real configs of the corpus, a no-op round trip with
ruamel.yaml 0.18 (quotes preserved, unlimited width) changes 29 files (trailing spaces, `null` -> empty, sequence
indentation, a duplicate key dropped), and composing is ~35x slower than libyaml. Editing spans keeps everything.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.lines import split_yaml_lines
from grpo_schema.engine.loader import load_yaml

try:  # libyaml's composer when available: the same nodes and marks, much faster
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader


class EditError(ValueError):
    """The fix cannot be applied mechanically to this file (the reason is the message)."""


def _split(name: str) -> tuple[str, ...]:
    if "[" in name:
        raise EditError(f"cannot edit {name}: only top-level keys and env.NAME are edited automatically")
    head, dot, rest = name.partition(".")
    return (head, rest) if dot and head == "env" else (name,)


def _parent(mapping: dict[str, Any], path: tuple[str, ...], create: bool) -> dict[str, Any] | None:
    node = mapping
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            if not create:
                return None
            node[key] = {}
        node = node[key]
    return node


def apply_fix(mapping: dict[str, Any], fix: Fix) -> dict[str, Any]:
    """The mapping with `fix` applied (a new object; the argument is not modified)."""
    out = copy.deepcopy(mapping)
    for old, new in fix.rename.items():
        parent = _parent(out, _split(old), create=False)
        old_key, new_key = _split(old)[-1], _split(new)[-1]
        if parent is None or old_key not in parent:
            continue
        if new_key in parent:
            raise EditError(f"cannot rename {old} to {new}: {new} is already set")
        items = [(new_key if k == old_key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
    for name in fix.unset:
        parent = _parent(out, _split(name), create=False)
        if parent is not None:
            parent.pop(_split(name)[-1], None)
    for name, value in fix.set.items():
        _parent(out, _split(name), create=True)[_split(name)[-1]] = copy.deepcopy(value)
    return out


def render_value(value: Any) -> str:
    """A value as one line of YAML that the validator's loader reads back as the same value."""
    dumped = yaml.safe_dump([value], default_flow_style=True, width=1 << 30, allow_unicode=True)
    return dumped.strip()[1:-1]


@dataclass
class _Entry:
    key_line: int
    key_span: tuple[int, int, int]  # line, start column, end column of the key token
    end_line: int  # last line of the value
    column: int  # indentation of the key
    line_ends: dict[int, int]  # line -> column where the YAML content on it ends (what follows may be a comment)
    value_span: tuple[int, int, int] | None  # one-line scalar or flow value: line, start, end


_INSIDE_SCALAR = 1 << 30  # lines inside a multi-line scalar hold no comments, whatever they start with


def _content_ends(node: Any, ends: dict[int, int]) -> None:
    ends[node.end_mark.line] = max(ends.get(node.end_mark.line, 0), node.end_mark.column)
    if isinstance(node.value, str):
        for line in range(node.start_mark.line + 1, node.end_mark.line + 1):
            ends[line] = _INSIDE_SCALAR
    children = node.value if isinstance(node.value, list) else []
    for child in children:
        for item in child if isinstance(child, tuple) else (child,):
            _content_ends(item, ends)


def _entry(key: Any, value: Any) -> _Entry:
    end = value.end_mark
    end_line = end.line - 1 if end.column == 0 and end.line > value.start_mark.line else end.line
    ends: dict[int, int] = {key.end_mark.line: key.end_mark.column}
    _content_ends(value, ends)
    one_line = value.start_mark.line == value.end_mark.line and not (
        value.tag.endswith((":map", ":seq")) and not getattr(value, "flow_style", False)
    )
    span = (value.start_mark.line, value.start_mark.column, value.end_mark.column) if one_line else None
    if one_line and value.start_mark.line != key.start_mark.line:
        span = None
    return _Entry(
        key.start_mark.line,
        (key.start_mark.line, key.start_mark.column, key.end_mark.column),
        max(end_line, key.start_mark.line),
        key.start_mark.column,
        ends,
        span,
    )


class _Document:
    """The lines of a YAML file plus the spans of the entries of its top-level mapping (and of env)."""

    def __init__(self, text: str):
        self.lines = split_yaml_lines(text, keepends=True)  # indexed by PyYAML's marks
        try:
            root = yaml.compose(text, Loader=_Loader)
        except yaml.YAMLError as exc:
            raise EditError(f"the file is not readable YAML ({exc})") from None
        if root is None or not root.tag.endswith(":map") or root.flow_style:
            raise EditError("the top level is not a block mapping")
        self.root = root

    def mapping_node(self, path: tuple[str, ...]) -> Any:
        node = self.root
        for key in path[:-1]:
            found = [v for k, v in node.value if k.value == key]
            if len(found) != 1 or not found[0].tag.endswith(":map") or found[0].flow_style:
                raise EditError(f"{'.'.join(path)}: {key} is not a block mapping in the file")
            node = found[0]
        return node

    def entry(self, path: tuple[str, ...]) -> _Entry | None:
        matches = [(k, v) for k, v in self.mapping_node(path).value if k.value == path[-1]]
        if len(matches) > 1:
            raise EditError(f"{'.'.join(path)} appears {len(matches)} times in the file")
        return _entry(*matches[0]) if matches else None

    def last_entry(self, path: tuple[str, ...]) -> _Entry | None:
        pairs = self.mapping_node(path).value
        return _entry(*pairs[-1]) if pairs else None

    def comment_after(self, line: int, column: int) -> str:
        rest = self.lines[line][column:].strip()
        rest = rest[1:].lstrip() if rest.startswith(":") else rest  # after a key: "key:  # comment"
        return rest if rest.startswith("#") else ""

    def newline(self) -> str:
        return "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"


def _removal_lines(doc: _Document, entry: _Entry) -> list[str]:
    """What stays of an entry's lines when it is removed: its comments, each on a line of its own."""
    kept = []
    for number in range(entry.key_line, entry.end_line + 1):
        end = entry.line_ends.get(number, 0)
        stripped = doc.lines[number].strip()
        if end == _INSIDE_SCALAR:
            continue
        comment = stripped if stripped.startswith("#") else doc.comment_after(number, end)
        if comment:
            kept.append(" " * entry.column + comment + doc.newline())
    return kept


def _entry_replaced(doc: _Document, entry: _Entry, key: str, value: Any) -> list[str]:
    """One `key: value` line in place of an entry; its comments stay (the key line's one on the new line)."""
    kept = _removal_lines(doc, entry)
    comment = doc.comment_after(entry.key_line, entry.line_ends.get(entry.key_line, 0))
    line = f"{' ' * entry.column}{key}: {render_value(value)}" + (f"  {comment}" if comment else "")
    return [line + doc.newline()] + kept[bool(comment) :]


def _edit_text(text: str, fix: Fix) -> str:
    for old, new in fix.rename.items():
        doc = _Document(text)
        entry = doc.entry(_split(old))
        if entry is not None:
            line, start, end = entry.key_span
            doc.lines[line] = doc.lines[line][:start] + _split(new)[-1] + doc.lines[line][end:]
            text = "".join(doc.lines)
    pending = dict(fix.set)
    for name in fix.unset:
        doc = _Document(text)
        entry = doc.entry(_split(name))
        if entry is None:
            continue
        replacement = _removal_lines(doc, entry)
        # A key set by the same fix takes the removed key's place (warmup_ratio -> warmup_steps).
        takes_place = next((k for k in pending if _split(k)[:-1] == _split(name)[:-1]), None)
        if takes_place is not None and doc.entry(_split(takes_place)) is None:
            replacement = _entry_replaced(doc, entry, _split(takes_place)[-1], pending.pop(takes_place))
        doc.lines[entry.key_line : entry.end_line + 1] = replacement
        text = "".join(doc.lines)
    for name, value in pending.items():
        text = _set_text(text, _split(name), value)
    return text


def _set_text(text: str, path: tuple[str, ...], value: Any) -> str:
    doc = _Document(text)
    entry = doc.entry(path)
    if entry is not None and entry.value_span is not None:
        line, start, end = entry.value_span
        doc.lines[line] = doc.lines[line][:start] + render_value(value) + doc.lines[line][end:]
        return "".join(doc.lines)
    if entry is not None:  # a block value: the new value goes on the key's line
        doc.lines[entry.key_line : entry.end_line + 1] = _entry_replaced(doc, entry, path[-1], value)
        return "".join(doc.lines)
    last = doc.last_entry(path)
    if last is None:
        raise EditError(f"cannot add {'.'.join(path)}: its section is empty in the file")
    if doc.lines and not doc.lines[-1].endswith("\n"):
        doc.lines[-1] += doc.newline()
    new = f"{' ' * last.column}{path[-1]}: {render_value(value)}{doc.newline()}"
    doc.lines.insert(last.end_line + 1, new)
    return "".join(doc.lines)


def apply_fix_to_text(text: str, fix: Fix) -> str:
    """`text` with `fix` applied; raises EditError (text untouched) when the edit cannot be made and verified."""
    before = load_yaml(text)
    if not before.ok or not isinstance(before.data, dict):
        raise EditError("the file does not load as a mapping")
    expected = apply_fix(before.data, fix)
    edited = _edit_text(text, fix)
    after = load_yaml(edited)
    if not after.ok or after.data != expected:
        raise EditError(f"editing the file for '{fix.title or fix}' did not give the expected result")
    return edited


def apply_fixes_to_text(text: str, fixes: list[Fix]) -> tuple[str, list[Fix], list[tuple[Fix, str]]]:
    """Apply fixes one after the other; returns (text, applied, [(skipped fix, why)])."""
    applied, skipped = [], []
    for fix in fixes:
        try:
            text = apply_fix_to_text(text, fix)
            applied.append(fix)
        except EditError as exc:
            skipped.append((fix, str(exc)))
    return text, applied, skipped
