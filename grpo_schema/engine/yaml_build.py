"""A YAML document built from PyYAML's event stream (never its recursive composer), keeping every key's position
and counting what aliases expand to before anything is expanded; scalars resolved as `yaml.safe_load` resolves
them."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.positions import Path, Positions, dotted
from grpo_schema.engine.yaml_refusals import MAX_DEPTH, MAX_INT_CHARS, MAX_VALUES, Refused, error


class _ScalarLoader(yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """The resolver and constructor of yaml.safe_load (those of yaml.CSafeLoader and yaml.SafeLoader), without a
    parser: made only for a scalar the memo does not know, which most documents do not hold."""

    def __init__(self) -> None:
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


_SCALAR_TAGS = {"tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_INT_TAG = "tag:yaml.org,2002:int"
_TAG_WORDS = {
    "null": "null",
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "string",
    "timestamp": "date",
}


@dataclass(slots=True)
class _Frame:
    is_map: bool  # a mapping, else a sequence
    value: Any
    path: Path
    anchor: str | None
    mark: Any
    key: Any = None  # pending mapping key (None: expecting a key)
    key_mark: Any = None
    has_key: bool = False
    size: int = 1
    merges: list = field(default_factory=list)


# A scalar's value depends only on its tag, text and implicit flags, and the same few hundred keys and values recur
# in every config: resolving and constructing one through PyYAML costs ~5 us, a lookup here ~0.2 us. Bounded in
# entries and in the text length of each; immutable values only, so sharing one between documents changes nothing
# (PyYAML itself returns one shared object for every .nan).
MEMO_CHARS = 200
MEMO_ENTRIES = 4096
_SCALAR_MEMO: dict[tuple, Any] = {}
_UNKNOWN = object()  # what the memo answers for a scalar it does not hold (None is a value it holds)
_IMMUTABLE = (str, int, float, type(None), datetime.date)

# The parser emits the classes of yaml.events themselves (never subclasses), so the event loop dispatches on the
# exact class: one identity test for a scalar, most of the events, instead of a chain of isinstance calls.
_SCALAR_EVENT = yaml.ScalarEvent
_OPENS = {yaml.MappingStartEvent: True, yaml.SequenceStartEvent: False}  # start event -> opens a mapping
_CLOSES = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _memoizable(value: Any) -> bool:
    return isinstance(value, _IMMUTABLE)


def _too_many(n: int, mark: Any) -> Refused:
    return Refused(
        error(
            codes.Y_ALIAS_BOMB if n > 1 else codes.Y_TOO_MANY_KEYS,
            f"the document expands to more than {MAX_VALUES} values",
            mark,
            "remove the anchors and aliases that multiply the content",
        )
    )


class Builder:
    """Builds values from events; keeps positions and enforces the limits."""

    def __init__(self, parser: Any):
        self.parser = parser
        self.scalar_loader: _ScalarLoader | None = None
        self.positions = Positions()
        self.diagnostics: list[Diagnostic] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.total = 0
        self.editor_line = lambda line: line  # PyYAML's 1-based line -> the editor's, for line numbers in messages

    def count(self, n: int, mark: Any) -> None:
        self.total += n
        if self.total > MAX_VALUES:
            raise _too_many(n, mark)

    def scalar(self, event: Any) -> Any:
        """The value of a scalar event, as yaml.safe_load would build it (memoized: see _SCALAR_MEMO); counted,
        and kept under its anchor. The most frequent event: count() is written out here."""
        self.total += 1
        if self.total > MAX_VALUES:
            raise _too_many(1, event.start_mark)
        text = event.value
        key = (event.tag, text, event.implicit)
        value = _SCALAR_MEMO.get(key, _UNKNOWN)  # a text too long to be kept is simply not found
        if value is _UNKNOWN:
            value = self.construct_scalar(event)
            if len(text) <= MEMO_CHARS and _memoizable(value):
                if len(_SCALAR_MEMO) >= MEMO_ENTRIES:
                    _SCALAR_MEMO.clear()
                _SCALAR_MEMO[key] = value
        if event.anchor:
            self.anchors[event.anchor] = (value, 1)
        return value

    def constructor(self) -> _ScalarLoader:
        if self.scalar_loader is None:
            self.scalar_loader = _ScalarLoader()
        return self.scalar_loader

    def construct_scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.constructor().resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == "tag:yaml.org,2002:merge":
            return "<<"
        if tag not in _SCALAR_TAGS:
            raise Refused(
                error(
                    codes.Y_TAG,
                    f"the tag {tag!r} is not allowed in a config",
                    event.start_mark,
                    "remove the tag and write a plain value",
                )
            )
        if tag == _INT_TAG and len(event.value) > MAX_INT_CHARS:
            # int() of a long decimal string raises past 4300 digits, and a base-60 one (1:2:3...) is quadratic
            raise Refused(
                error(
                    codes.Y_SYNTAX,
                    f"an integer of {len(event.value)} characters is too large for a config",
                    event.start_mark,
                    "write a smaller number",
                )
            )
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            value = self.constructor().construct_object(node)
        except yaml.YAMLError as exc:
            raise Refused(
                error(codes.Y_SYNTAX, f"cannot read the value {_clip(event.value)!r}: {exc}", event.start_mark)
            )
        except (ValueError, KeyError, IndexError, AttributeError, OverflowError):
            # PyYAML's constructors raise plain Python errors on values its resolver or a tag let through:
            # 2001-02-30, !!bool maybe, !!int abc, !!timestamp foo, and an empty !!int or !!float (IndexError)
            kind = _TAG_WORDS[tag.rsplit(":", 1)[1]]
            raise Refused(
                error(
                    codes.Y_SYNTAX,
                    f"{_clip(event.value)!r} is not a valid {kind}",
                    event.start_mark,
                    "quote the value to keep it a string, or correct it",
                )
            )
        return value

    def build(self) -> Any:
        stack: list[_Frame] = []
        root: Any = None
        docs = 0
        get_event = self.parser.get_event
        while True:
            event = get_event()
            kind = type(event)
            if kind is _SCALAR_EVENT:
                value, size, mark = self.scalar(event), 1, event.start_mark
            elif kind in _OPENS:
                self.open(event, stack, _OPENS[kind])
                continue
            elif kind in _CLOSES:
                frame = stack.pop()
                value, size, mark = self.close(frame), frame.size, frame.mark
            elif kind is yaml.AliasEvent:
                value, size = self.alias(event)
                mark = event.start_mark
            elif kind is yaml.StreamEndEvent:
                return root
            elif kind is yaml.DocumentStartEvent:
                docs += 1
                if docs > 1:
                    raise Refused(
                        error(
                            codes.Y_MULTI_DOC,
                            "the file holds more than one YAML document",
                            event.start_mark,
                            "keep one document; remove the extra '---'",
                        )
                    )
                continue
            else:  # StreamStartEvent, DocumentEndEvent: nothing to build
                continue
            if not stack:
                root = value
                continue
            top = stack[-1]
            top.size += size
            if top.is_map and not top.has_key:  # a mapping's key: held until its value is built
                top.key, top.key_mark, top.has_key = value, mark, True
            else:
                self.attach(top, value, mark)

    def alias(self, event: Any) -> tuple[Any, int]:
        if event.anchor in self.open_anchors:
            raise Refused(
                error(
                    codes.Y_ALIAS_BOMB,
                    f"the alias *{event.anchor} refers to itself",
                    event.start_mark,
                    "recursive structures are not allowed in a config",
                )
            )
        if event.anchor not in self.anchors:
            raise Refused(error(codes.Y_SYNTAX, f"undefined alias *{event.anchor}", event.start_mark))
        value, size = self.anchors[event.anchor]
        self.count(size, event.start_mark)
        return value, size

    def open(self, event: Any, stack: list[_Frame], is_map: bool) -> None:
        """A mapping or sequence starts: checked, counted and pushed; its value is built when it ends."""
        if len(stack) >= MAX_DEPTH:
            raise Refused(
                error(
                    codes.Y_TOO_DEEP,
                    f"values are nested more than {MAX_DEPTH} levels deep",
                    event.start_mark,
                    "flatten the structure",
                )
            )
        self.check_collection_tag(event)
        self.count(1, event.start_mark)
        stack.append(_Frame(is_map, {} if is_map else [], self.child_path(stack), event.anchor, event.start_mark))
        if event.anchor:
            self.open_anchors.add(event.anchor)

    def close(self, frame: _Frame) -> Any:
        value = self.finish(frame)
        if frame.anchor:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (value, frame.size)
        return value

    def check_collection_tag(self, event: Any) -> None:
        if event.tag and event.tag not in ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "!"):
            raise Refused(
                error(
                    codes.Y_TAG, f"the tag {event.tag!r} is not allowed in a config", event.start_mark, "remove the tag"
                )
            )

    @staticmethod
    def child_path(stack: list[_Frame]) -> Path:
        if not stack:
            return ()
        top = stack[-1]
        if not top.is_map:
            return top.path + (len(top.value),)
        return top.path + (top.key if isinstance(top.key, (str, int)) else str(top.key),)

    def attach(self, top: _Frame, value: Any, mark: Any) -> None:
        """Add a built value to the innermost open collection: a sequence item, or the value of the pending key."""
        if not top.is_map:
            self.positions.values.setdefault(top.path + (len(top.value),), (mark.line + 1, mark.column + 1))
            top.value.append(value)
        else:
            self.put(top, top.key, top.key_mark, value, mark)
            top.key, top.has_key = None, False

    def put(self, frame: _Frame, key: Any, key_mark: Any, value: Any, value_mark: Any) -> None:
        if key == "<<" and isinstance(key, str):
            frame.merges.append((value, key_mark))
            return
        if not isinstance(key, str):
            self.diagnostics.append(
                error(
                    codes.Y_KEY_TYPE,
                    f"the key {_show_key(key)} is read as {_KIND.get(type(key), 'a non-string')}, not a string",
                    key_mark,
                    "quote the key (YAML 1.1 reads on/off/yes/no, numbers and null as other types)",
                )
            )
            key = str(key).lower() if isinstance(key, bool) else str(key)
        path = frame.path + (key,)
        if key in frame.value:
            first = self.positions.keys.get(path)
            where = f" (first at line {self.editor_line(first[0])})" if first else ""
            if frame.value[key] == value:
                self.diagnostics.append(
                    Diagnostic(
                        codes.Y_DUPLICATE_SAME,
                        "warning",
                        f"the key {key!r} appears twice with the same value{where}",
                        fields=(dotted(path),),
                        line=key_mark.line + 1,
                        column=key_mark.column + 1,
                        hint="remove the second one",
                    )
                )
            else:
                self.diagnostics.append(
                    error(
                        codes.Y_DUPLICATE,
                        f"the key {key!r} appears twice in the same mapping with different values"
                        f"{where}; the last one wins",
                        key_mark,
                        "keep one of them; YAML loaders silently keep the last value",
                        fields=(dotted(path),),
                    )
                )
        else:
            self.positions.keys[path] = (key_mark.line + 1, key_mark.column + 1)
        self.positions.values[path] = (value_mark.line + 1, value_mark.column + 1)
        frame.value[key] = value

    def finish(self, frame: _Frame) -> Any:
        if not frame.is_map or not frame.merges:
            return frame.value
        merged: dict[Any, Any] = {}
        for source, mark in frame.merges:
            sources = source if isinstance(source, list) else [source]
            for item in sources:
                if not isinstance(item, dict):
                    raise Refused(error(codes.Y_SYNTAX, "a merge key '<<' needs a mapping or a list of mappings", mark))
                for key, value in item.items():
                    merged.setdefault(key, value)
        merged.update(frame.value)
        return merged


_KIND = {bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show_key(key: Any) -> str:
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return repr(key)
