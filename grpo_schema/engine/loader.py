"""YAML text -> plain Python values plus the position of every key, with every resource bounded.

The document is built from PyYAML's event stream (never its recursive composer), so that:
- every mapping key keeps its 1-based line and column (`Positions`);
- duplicate keys, non-string keys, tags and several documents are reported, not silently resolved;
- aliases are counted by the size they expand to and refused past a limit before anything is expanded
  (the "billion laughs" file costs microseconds), recursive aliases are refused, and nesting depth and the
  total number of values are bounded; the file size is checked before parsing.
Scalars are resolved exactly as `yaml.safe_load` resolves them (YAML 1.1: `1e-6` is a string, `no` is false).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic

try:  # the C parser when available: same events, faster
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

MAX_BYTES = 1_000_000
MAX_DEPTH = 50
MAX_VALUES = 50_000  # values after alias expansion; real configs have a few hundred
MAX_INT_CHARS = 1_000  # an integer written with more characters is refused before int() sees it

Path = tuple[str | int, ...]
_SCALAR_TAGS = {"tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_INT_TAG = "tag:yaml.org,2002:int"
_TAG_WORDS = {"null": "null", "bool": "boolean", "int": "integer", "float": "number", "str": "string",
              "timestamp": "date"}


@dataclass
class Positions:
    """1-based (line, column) of keys and values, by key path: ('datasets', 0, 'path')."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def of(self, path: Path) -> tuple[int, int] | None:
        """Position of the key at `path`, else of the nearest enclosing key or value that has one."""
        for end in range(len(path), 0, -1):
            prefix = path[:end]
            if prefix in self.keys:
                return self.keys[prefix]
            if prefix in self.values:
                return self.values[prefix]
        return None


@dataclass
class LoadResult:
    data: Any = None
    positions: Positions = field(default_factory=Positions)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ok: bool = True


class _Refused(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _error(code: str, message: str, mark: Any = None, hint: str = "", fields: tuple[str, ...] = ()) -> Diagnostic:
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    return Diagnostic(code, "error", message, fields=fields, line=line, column=column, hint=hint)


@dataclass
class _Frame:
    kind: str  # "map" or "seq"
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
_SCALAR_MEMO: dict[tuple, tuple[Any]] = {}
_IMMUTABLE = (str, int, float, type(None), datetime.date)


def _memoizable(value: Any) -> bool:
    return isinstance(value, _IMMUTABLE)


class _Builder:
    """Builds values from events; keeps positions and enforces the limits."""

    def __init__(self, loader: Any):
        self.loader = loader
        self.positions = Positions()
        self.diagnostics: list[Diagnostic] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.total = 0

    def count(self, n: int, mark: Any) -> None:
        self.total += n
        if self.total > MAX_VALUES:
            raise _Refused(_error(codes.Y_ALIAS_BOMB if n > 1 else codes.Y_TOO_MANY_KEYS,
                                  f"the document expands to more than {MAX_VALUES} values", mark,
                                  "remove the anchors and aliases that multiply the content"))

    def scalar(self, event: Any) -> Any:
        """The value of a scalar event, as yaml.safe_load would build it (memoized: see _SCALAR_MEMO)."""
        key = (event.tag, event.value, event.implicit)
        known = _SCALAR_MEMO.get(key) if len(event.value) <= MEMO_CHARS else None
        if known is not None:
            return known[0]
        value = self.construct_scalar(event)
        if len(event.value) <= MEMO_CHARS and _memoizable(value):
            if len(_SCALAR_MEMO) >= MEMO_ENTRIES:
                _SCALAR_MEMO.clear()
            _SCALAR_MEMO[key] = (value,)
        return value

    def construct_scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == "tag:yaml.org,2002:merge":
            return "<<"
        if tag not in _SCALAR_TAGS:
            raise _Refused(_error(codes.Y_TAG, f"the tag {tag!r} is not allowed in a config", event.start_mark,
                                  "remove the tag and write a plain value"))
        if tag == _INT_TAG and len(event.value) > MAX_INT_CHARS:
            # int() of a long decimal string raises past 4300 digits, and a base-60 one (1:2:3...) is quadratic
            raise _Refused(_error(codes.Y_SYNTAX, f"an integer of {len(event.value)} characters is too large for a "
                                  "config", event.start_mark, "write a smaller number"))
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            value = self.loader.construct_object(node)
        except yaml.YAMLError as exc:
            raise _Refused(_error(codes.Y_SYNTAX, f"cannot read the value {_clip(event.value)!r}: {exc}",
                                  event.start_mark))
        except (ValueError, KeyError, IndexError, AttributeError, OverflowError):
            # PyYAML's constructors raise plain Python errors on values its resolver or a tag let through:
            # 2001-02-30, !!bool maybe, !!int abc, !!timestamp foo, and an empty !!int or !!float (IndexError)
            kind = _TAG_WORDS[tag.rsplit(":", 1)[1]]
            raise _Refused(_error(codes.Y_SYNTAX, f"{_clip(event.value)!r} is not a valid {kind}", event.start_mark,
                                  "quote the value to keep it a string, or correct it"))
        return value

    def build(self) -> Any:
        stack: list[_Frame] = []
        root: Any = None
        docs = 0
        while True:
            event = self.loader.get_event()
            if isinstance(event, yaml.StreamEndEvent):
                return root
            if isinstance(event, yaml.DocumentStartEvent):
                docs += 1
                if docs > 1:
                    raise _Refused(_error(codes.Y_MULTI_DOC, "the file holds more than one YAML document",
                                          event.start_mark, "keep one document; remove the extra '---'"))
                continue
            if isinstance(event, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = stack.pop()
                value = self.finish(frame)
                size = frame.size
                if frame.anchor:
                    self.open_anchors.discard(frame.anchor)
                    self.anchors[frame.anchor] = (value, size)
                if stack:
                    self.attach(stack, value, frame.mark, size)
                else:
                    root = value
                continue
            value, size, is_node_start = self.value_of(event, stack)
            if is_node_start:
                continue
            if stack:
                self.attach(stack, value, event.start_mark, size)
            else:
                root = value

    def value_of(self, event: Any, stack: list[_Frame]) -> tuple[Any, int, bool]:
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self.open_anchors:
                raise _Refused(_error(codes.Y_ALIAS_BOMB, f"the alias *{event.anchor} refers to itself",
                                      event.start_mark, "recursive structures are not allowed in a config"))
            if event.anchor not in self.anchors:
                raise _Refused(_error(codes.Y_SYNTAX, f"undefined alias *{event.anchor}", event.start_mark))
            value, size = self.anchors[event.anchor]
            self.count(size, event.start_mark)
            return value, size, False
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise _Refused(_error(codes.Y_TOO_DEEP, f"values are nested more than {MAX_DEPTH} levels deep",
                                      event.start_mark, "flatten the structure"))
            self.check_collection_tag(event)
            self.count(1, event.start_mark)
            is_map = isinstance(event, yaml.MappingStartEvent)
            path = self.child_path(stack)
            stack.append(_Frame("map" if is_map else "seq", {} if is_map else [], path, event.anchor,
                                event.start_mark))
            if event.anchor:
                self.open_anchors.add(event.anchor)
            return None, 0, True
        self.count(1, event.start_mark)
        value = self.scalar(event)
        if event.anchor:
            self.anchors[event.anchor] = (value, 1)
        return value, 1, False

    def check_collection_tag(self, event: Any) -> None:
        if event.tag and event.tag not in ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "!"):
            raise _Refused(_error(codes.Y_TAG, f"the tag {event.tag!r} is not allowed in a config",
                                  event.start_mark, "remove the tag"))

    @staticmethod
    def child_path(stack: list[_Frame]) -> Path:
        if not stack:
            return ()
        top = stack[-1]
        if top.kind == "seq":
            return top.path + (len(top.value),)
        return top.path + (top.key if isinstance(top.key, (str, int)) else str(top.key),)

    def attach(self, stack: list[_Frame], value: Any, mark: Any, size: int) -> None:
        top = stack[-1]
        top.size += size
        if top.kind == "seq":
            self.positions.values.setdefault(top.path + (len(top.value),), (mark.line + 1, mark.column + 1))
            top.value.append(value)
            return
        if not top.has_key:
            top.key, top.key_mark, top.has_key = value, mark, True
            return
        self.put(top, top.key, top.key_mark, value, mark)
        top.key, top.has_key = None, False

    def put(self, frame: _Frame, key: Any, key_mark: Any, value: Any, value_mark: Any) -> None:
        if key == "<<" and isinstance(key, str):
            frame.merges.append((value, key_mark))
            return
        if not isinstance(key, str):
            self.diagnostics.append(_error(
                codes.Y_KEY_TYPE, f"the key {_show_key(key)} is read as {_KIND.get(type(key), 'a non-string')}, "
                "not a string", key_mark,
                "quote the key (YAML 1.1 reads on/off/yes/no, numbers and null as other types)"))
            key = str(key).lower() if isinstance(key, bool) else str(key)
        path = frame.path + (key,)
        if key in frame.value:
            first = self.positions.keys.get(path)
            where = f" (first at line {first[0]})" if first else ""
            if frame.value[key] == value:
                self.diagnostics.append(Diagnostic(
                    codes.Y_DUPLICATE_SAME, "warning", f"the key {key!r} appears twice with the same value{where}",
                    fields=(_dotted(path),), line=key_mark.line + 1, column=key_mark.column + 1,
                    hint="remove the second one"))
            else:
                self.diagnostics.append(_error(
                    codes.Y_DUPLICATE, f"the key {key!r} appears twice in the same mapping with different values"
                    f"{where}; the last one wins", key_mark,
                    "keep one of them; YAML loaders silently keep the last value", fields=(_dotted(path),)))
        else:
            self.positions.keys[path] = (key_mark.line + 1, key_mark.column + 1)
        self.positions.values[path] = (value_mark.line + 1, value_mark.column + 1)
        frame.value[key] = value

    def finish(self, frame: _Frame) -> Any:
        if frame.kind != "map" or not frame.merges:
            return frame.value
        merged: dict[Any, Any] = {}
        for source, mark in frame.merges:
            sources = source if isinstance(source, list) else [source]
            for item in sources:
                if not isinstance(item, dict):
                    raise _Refused(_error(codes.Y_SYNTAX, "a merge key '<<' needs a mapping or a list of mappings",
                                          mark))
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


def _dotted(path: Path) -> str:
    """('datasets', 0, 'path') -> 'datasets[0].path'; ('env', 'HF_HOME') -> 'env.HF_HOME'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


dotted = _dotted


def _syntax_diagnostic(exc: yaml.YAMLError, text: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if "\t" in problem or "'\\t'" in problem or (mark is not None and _tab_at(text, mark)):
        return _error(codes.Y_TAB, "a tab character is used for indentation", mark,
                      "indent with spaces; YAML does not allow tabs in indentation")
    if "nesting depth" in problem:
        return _error(codes.Y_TOO_DEEP, "values are nested too deeply", mark, "flatten the structure")
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    found = _error(codes.Y_SYNTAX, message, mark, "fix the YAML syntax at this position")
    lines = text.splitlines()
    if found.line is not None and lines and found.line > len(lines):
        # The parser stops past the last line at the end of the file: report it at the end of the last line.
        found = replace(found, line=len(lines), column=len(lines[-1]) + 1)
    return found


def _tab_at(text: str, mark: Any) -> bool:
    lines = text.splitlines()
    if mark.line >= len(lines):
        return False
    line = lines[mark.line]
    return "\t" in line[: len(line) - len(line.lstrip(" \t"))]


def load_yaml(text: str | bytes) -> LoadResult:
    """Parse one YAML document into plain values and key positions; never raises on bad input."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            return _refuse(_error(codes.Y_TOO_LARGE, f"the file is {len(text)} bytes; the limit is {MAX_BYTES}"))
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return _refuse(_error(codes.Y_ENCODING, f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"))
    if len(text) > MAX_BYTES:
        return _refuse(_error(codes.Y_TOO_LARGE, f"the file is {len(text)} characters; the limit is {MAX_BYTES}"))
    if "\x00" in text:
        return _refuse(_error(codes.Y_ENCODING, "the file contains NUL bytes; it is not a text file"))
    loader = _Loader(text)
    builder = _Builder(loader)
    try:
        data = builder.build()
    except _Refused as refused:
        return _refuse(refused.diagnostic, builder.diagnostics)
    except yaml.YAMLError as exc:
        return _refuse(_syntax_diagnostic(exc, text), builder.diagnostics)
    except RecursionError:  # pragma: no cover - the builder is iterative; kept as a last guard
        return _refuse(_error(codes.Y_TOO_DEEP, "values are nested too deeply"))
    finally:
        loader.dispose()
    return LoadResult(data=data, positions=builder.positions, diagnostics=builder.diagnostics)


def value_problem(value: Any) -> Diagnostic | None:
    """The loader's bounds, for a value built without it (check_mapping: a JSON body, a Python caller): nesting
    depth and value count (a cycle counts without end), and string keys at the top level. None when it is fine."""
    if isinstance(value, dict) and any(not isinstance(key, str) for key in value):
        key = next(key for key in value if not isinstance(key, str))
        return _error(codes.Y_KEY_TYPE, f"the key {key!r} is not a string", hint="write every key as a string")
    stack, count = [(value, 0)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return _error(codes.Y_TOO_MANY_KEYS, f"the config holds more than {MAX_VALUES} values")
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return _error(codes.Y_TOO_DEEP, f"values are nested more than {MAX_DEPTH} levels deep",
                              hint="flatten the structure")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def _refuse(diagnostic: Diagnostic, earlier: list[Diagnostic] | None = None) -> LoadResult:
    return LoadResult(diagnostics=[*(earlier or []), diagnostic], ok=False)
