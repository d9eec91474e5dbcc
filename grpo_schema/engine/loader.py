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

import codecs
import datetime
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.lines import YAML_ONLY_BREAKS, YamlToEditorLines, line_starts, split_yaml_lines

try:  # the C parser when available: same events, faster
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Parser


class _ScalarLoader(yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """The resolver and constructor of yaml.safe_load (those of yaml.CSafeLoader and yaml.SafeLoader), without a
    parser: made only for a scalar the memo does not know, which most documents do not hold."""

    def __init__(self) -> None:
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


MAX_BYTES = 1_000_000
MAX_DEPTH = 50
MAX_VALUES = 50_000  # values after alias expansion; real configs have a few hundred
MAX_INT_CHARS = 1_000  # an integer written with more characters is refused before int() sees it

Path = tuple[str | int, ...]
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


def _too_many(n: int, mark: Any) -> _Refused:
    return _Refused(
        _error(
            codes.Y_ALIAS_BOMB if n > 1 else codes.Y_TOO_MANY_KEYS,
            f"the document expands to more than {MAX_VALUES} values",
            mark,
            "remove the anchors and aliases that multiply the content",
        )
    )


class _Builder:
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
            raise _Refused(
                _error(
                    codes.Y_TAG,
                    f"the tag {tag!r} is not allowed in a config",
                    event.start_mark,
                    "remove the tag and write a plain value",
                )
            )
        if tag == _INT_TAG and len(event.value) > MAX_INT_CHARS:
            # int() of a long decimal string raises past 4300 digits, and a base-60 one (1:2:3...) is quadratic
            raise _Refused(
                _error(
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
            raise _Refused(
                _error(codes.Y_SYNTAX, f"cannot read the value {_clip(event.value)!r}: {exc}", event.start_mark)
            )
        except (ValueError, KeyError, IndexError, AttributeError, OverflowError):
            # PyYAML's constructors raise plain Python errors on values its resolver or a tag let through:
            # 2001-02-30, !!bool maybe, !!int abc, !!timestamp foo, and an empty !!int or !!float (IndexError)
            kind = _TAG_WORDS[tag.rsplit(":", 1)[1]]
            raise _Refused(
                _error(
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
                    raise _Refused(
                        _error(
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
            raise _Refused(
                _error(
                    codes.Y_ALIAS_BOMB,
                    f"the alias *{event.anchor} refers to itself",
                    event.start_mark,
                    "recursive structures are not allowed in a config",
                )
            )
        if event.anchor not in self.anchors:
            raise _Refused(_error(codes.Y_SYNTAX, f"undefined alias *{event.anchor}", event.start_mark))
        value, size = self.anchors[event.anchor]
        self.count(size, event.start_mark)
        return value, size

    def open(self, event: Any, stack: list[_Frame], is_map: bool) -> None:
        """A mapping or sequence starts: checked, counted and pushed; its value is built when it ends."""
        if len(stack) >= MAX_DEPTH:
            raise _Refused(
                _error(
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
            raise _Refused(
                _error(
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
                _error(
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
                        fields=(_dotted(path),),
                        line=key_mark.line + 1,
                        column=key_mark.column + 1,
                        hint="remove the second one",
                    )
                )
            else:
                self.diagnostics.append(
                    _error(
                        codes.Y_DUPLICATE,
                        f"the key {key!r} appears twice in the same mapping with different values"
                        f"{where}; the last one wins",
                        key_mark,
                        "keep one of them; YAML loaders silently keep the last value",
                        fields=(_dotted(path),),
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
                    raise _Refused(
                        _error(codes.Y_SYNTAX, "a merge key '<<' needs a mapping or a list of mappings", mark)
                    )
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
        return _error(
            codes.Y_TAB,
            "a tab character is used for indentation",
            mark,
            "indent with spaces; YAML does not allow tabs in indentation",
        )
    if "nesting depth" in problem:
        return _error(codes.Y_TOO_DEEP, "values are nested too deeply", mark, "flatten the structure")
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    found = _error(codes.Y_SYNTAX, message, mark, _odd_break_hint(text, mark) or "fix the YAML syntax at this position")
    lines = split_yaml_lines(text)  # the parser's mark counts lines as YAML does
    if found.line is not None and lines and found.line > len(lines):
        # The parser stops past the last line at the end of the file: report it at the end of the last line.
        found = replace(found, line=len(lines), column=len(lines[-1]) + 1)
    return found


_BREAK_NAMES = {
    "\u2028": "U+2028 (line separator)",
    "\u2029": "U+2029 (paragraph separator)",
    "\x85": "U+0085 (next line)",
}


def _odd_break_hint(text: str, mark: Any) -> str:
    """When the parser stopped on a line YAML 1.1 started at a character editors show inside a line: say so."""
    if mark is None:
        return ""
    index = min(getattr(mark, "index", 0), len(text)) - mark.column
    odd = text[index - 1] if 0 < index <= len(text) else ""
    if odd not in _BREAK_NAMES:
        return ""
    return (
        f"YAML 1.1 (PyYAML, which trl reads configs with) ends a line at the {_BREAK_NAMES[odd]} here, where "
        "editors show none: remove it, or write it as an escape (\\u2028) inside a double-quoted string"
    )


def _tab_at(text: str, mark: Any) -> bool:
    lines = split_yaml_lines(text)
    if mark.line >= len(lines):
        return False
    line = lines[mark.line]
    return "\t" in line[: len(line) - len(line.lstrip(" \t"))]


def _decode(data: bytes) -> str:
    """data.decode("utf-8-sig"), whose codec is Python code (~2 us a call); the same in C: one leading BOM
    dropped, then strict UTF-8, an error's offset counted after the BOM as that codec counts it."""
    return (data[3:] if data.startswith(codecs.BOM_UTF8) else data).decode("utf-8")


def load_yaml(text: str | bytes) -> LoadResult:
    """Parse one YAML document into plain values and key positions; never raises on bad input. Lines are
    counted as editors count them (grpo_schema.engine.lines), also where YAML 1.1 counts more breaks."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            return _refuse(_error(codes.Y_TOO_LARGE, f"the file is {len(text)} bytes; the limit is {MAX_BYTES}"))
        try:
            text = _decode(text)
        except UnicodeDecodeError as exc:
            return _refuse(_not_utf8(text, exc))
    convert = YamlToEditorLines(text) if YAML_ONLY_BREAKS.search(text) else None
    result = _load(text, convert)
    if convert is not None:
        _reline(result, convert)
    return result


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """Where the first byte that is not UTF-8 is: its line and column (in characters of the valid text before it),
    so that the editor, which shows the file decoded some other way (Latin-1, cp1252), marks the same place."""
    start = exc.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)
    before = data[:start].decode("utf-8", "replace")
    starts = line_starts(before)
    line, column = len(starts), len(before) - starts[-1] + 1
    return Diagnostic(
        codes.Y_ENCODING,
        "error",
        f"the file is not UTF-8 text ({exc.reason} at byte {exc.start}: "
        f"{data[start : start + 1]!r}); trl reads configs as UTF-8",
        line=line,
        column=column,
        hint="save the file as UTF-8 (in the editor: reopen with the encoding it was written in, then save with UTF-8)",
    )


def _reline(result: LoadResult, convert: YamlToEditorLines) -> None:
    """Positions and diagnostics from PyYAML's line count to the editor's (U+2028 and the like end no line)."""

    def moved(line: int, column: int | None) -> tuple[int, int]:
        line, column = convert(line - 1, (column or 1) - 1)
        return line + 1, column + 1

    for table in (result.positions.keys, result.positions.values):
        for path, (line, column) in table.items():
            table[path] = moved(line, column)
    result.diagnostics = [
        d if d.line is None else replace(d, **dict(zip(("line", "column"), moved(d.line, d.column))))
        for d in result.diagnostics
    ]


def _load(text: str, convert: YamlToEditorLines | None) -> LoadResult:
    if len(text) > MAX_BYTES:
        return _refuse(_error(codes.Y_TOO_LARGE, f"the file is {len(text)} characters; the limit is {MAX_BYTES}"))
    if "\x00" in text:
        return _refuse(_error(codes.Y_ENCODING, "the file contains NUL bytes; it is not a text file"))
    parser = _Parser(text)
    builder = _Builder(parser)
    if convert is not None:
        builder.editor_line = lambda line: convert(line - 1, 0)[0] + 1
    try:
        data = builder.build()
    except _Refused as refused:
        return _refuse(refused.diagnostic, builder.diagnostics)
    except yaml.YAMLError as exc:
        return _refuse(_syntax_diagnostic(exc, text), builder.diagnostics)
    except RecursionError:  # pragma: no cover - the builder is iterative; kept as a last guard
        return _refuse(_error(codes.Y_TOO_DEEP, "values are nested too deeply"))
    finally:
        parser.dispose()
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
                return _error(
                    codes.Y_TOO_DEEP,
                    f"values are nested more than {MAX_DEPTH} levels deep",
                    hint="flatten the structure",
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def _refuse(diagnostic: Diagnostic, earlier: list[Diagnostic] | None = None) -> LoadResult:
    return LoadResult(diagnostics=[*(earlier or []), diagnostic], ok=False)
