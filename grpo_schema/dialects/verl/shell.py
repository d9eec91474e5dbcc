"""A reader of the shell scripts verl runs are launched from: words with their positions, variables resolved.

It runs nothing. Straight-line assignments (`X=1`, `export X=...`, arrays `A=( ... )`, `A+=( ... )`) are
followed; `${X:-default}` takes the default when the script never sets X, and says so; a variable the script
never sets is unknown (it comes from the environment), never guessed. What is assigned inside a branch, a loop or
a function, and any command substitution `$(...)`, is unknown too, with the line that made it so.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_OPENERS = {"if": "fi", "case": "esac", "for": "done", "while": "done", "until": "done", "select": "done", "{": "}"}
_KEYWORDS = {"then", "do", "else", "!"}  # words that may lead a command inside a block
_CLOSERS = {"fi", "esac", "done", "}"}


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal or expanded text, or None when it cannot be known (then `why` says why)."""

    text: str | None
    note: str = ""  # how an expansion resolved, e.g. "${NNODES:-1}: NNODES is not set, its default 1 taken"
    why: str = ""  # why the text is unknown
    literal: bool = False  # written in the script itself (not from a variable)


@dataclass
class Word:
    parts: list[Part]
    line: int
    column: int

    @property
    def known(self) -> bool:
        return all(p.text is not None for p in self.parts)

    @property
    def text(self) -> str | None:
        return "".join(p.text for p in self.parts) if self.known else None  # type: ignore[misc]

    @property
    def notes(self) -> list[str]:
        return [p.note for p in self.parts if p.note]

    @property
    def why(self) -> str:
        return "; ".join(dict.fromkeys(p.why for p in self.parts if p.text is None and p.why))

    def split_key(self) -> tuple[str, "Word"] | None:
        """`key=value` with the key written literally in the script: the key and the value's word."""
        head: list[str] = []
        for index, part in enumerate(self.parts):
            if part.text is None:
                return None
            if "=" in part.text:
                before, _, after = part.text.partition("=")
                rest = [Part(after, part.note, literal=part.literal)] if after else []
                return "".join(head) + before, Word(rest + self.parts[index + 1 :], self.line, self.column)
            head.append(part.text)
        return None


@dataclass
class Command:
    words: list[Word]
    line: int
    depth: int  # inside how many branches, loops or functions
    block: str = ""  # the innermost one, as "a `case` at line 12"


@dataclass
class ShellProblem:
    line: int
    column: int
    message: str
    severity: str = "error"  # "info": how the script was read, not a problem


@dataclass
class Unknown:
    why: str


@dataclass
class Script:
    commands: list[Command] = field(default_factory=list)
    problems: list[ShellProblem] = field(default_factory=list)


class _Scanner:
    """Splits the text into commands of words, keeping where each word starts (1-based line and column)."""

    def __init__(self, text: str, line: int = 1, col: int = 1) -> None:
        self.text = text
        self.i = 0
        self.line = line
        self.col = col

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def take(self, n: int = 1) -> str:
        out = self.text[self.i : self.i + n]
        for ch in out:
            if ch == "\n":
                self.line, self.col = self.line + 1, 1
            else:
                self.col += 1
        self.i += n
        return out

    def until_matching(self, opener: str, closer: str) -> str:
        """The text up to the closer that matches an opener already taken (quotes respected)."""
        depth, start = 1, self.i
        opened_at = (self.line, max(1, self.col - 1))
        while self.i < len(self.text):
            ch = self.peek()
            if ch == "\\":
                self.take(2)
                continue
            if ch == "'" and opener != "'":
                self.take()
                while self.peek() not in ("'", ""):
                    self.take()
            elif ch == opener and opener != closer:
                depth += 1
            elif ch == closer:
                depth -= 1
                if depth == 0:
                    body = self.text[start : self.i]
                    self.take()
                    return body
            self.take()
        raise _Unclosed(closer, *opened_at)


class _Unclosed(Exception):
    def __init__(self, closer: str, line: int = 0, column: int = 0) -> None:
        super().__init__(closer)
        self.closer, self.line, self.column = closer, line, column


@dataclass
class _Raw:
    """A word as written: its pieces before expansion, as (kind, text) with kind literal, single (quoted text),
    dollar (an expansion outside quotes, which the shell splits into words) or qdollar (one inside double quotes)."""

    pieces: list[tuple[str, str]]
    line: int
    column: int
    array: list["_Raw"] | None = None  # `NAME=( ... )`: the items
    source: str = ""  # the word as written in the script

    def plain(self) -> str:
        return "".join(text for kind, text in self.pieces if kind in ("literal", "single"))


_SEPARATORS = {";", "&", "|", "\n", "(", ")"}


def scan(text: str, line: int = 1, col: int = 1) -> tuple[list[tuple[list[_Raw], int]], list[ShellProblem]]:
    """The commands of a script (or of a piece of one that starts at line, col) as lists of raw words, with the line
    each starts on."""
    s = _Scanner(text.replace("\r\n", "\n"), line, col)
    commands: list[tuple[list[_Raw], int]] = []
    problems: list[ShellProblem] = []
    words: list[_Raw] = []
    heredocs: list[tuple[str, bool]] = []  # here-documents whose bodies start after this line: (delimiter, <<-)
    start_line = 1
    while s.i < len(s.text):
        ch = s.peek()
        if ch == "\\" and s.peek(1) == "\n":
            s.take(2)
            continue
        if ch in " \t":
            s.take()
            continue
        if ch == "#":
            while s.peek() not in ("\n", ""):
                s.take()
            continue
        if ch == "(" and words and re.match(r"\(\s*\)", s.text[s.i :]):  # `name()`: a function header
            s.take(re.match(r"\(\s*\)", s.text[s.i :]).end())  # type: ignore[union-attr]
            words.append(_Raw([("literal", "()")], s.line, s.col, source="()"))
            continue
        if ch in _SEPARATORS:
            s.take()
            if ch == "\n":
                for delimiter, tabs in heredocs:
                    _skip_heredoc(s, delimiter, tabs)
                heredocs = []
            if words:
                commands.append((words, start_line))
            words = []
            continue
        if not words:
            start_line = s.line
        try:
            words.append(_word(s))
            heredoc = _heredoc_start(words)
            if heredoc is not None:
                heredocs.append(heredoc)
        except _Unclosed as exc:
            problems.append(
                ShellProblem(
                    exc.line or s.line,
                    exc.column or s.col,
                    f"the {exc.closer} opened here is not closed before the end of the script",
                )
            )
            break
    if words:
        commands.append((words, start_line))
    return commands, problems


def _heredoc_start(words: list[_Raw]) -> tuple[str, bool] | None:
    """A here-document opened by the last word (`<<EOF`, `<<-'EOF'`, or `<<` then the delimiter): its delimiter as
    the body ends it (quotes removed) and whether leading tabs are stripped."""
    source = words[-1].source
    if source in ("<<", "<<-"):
        return None  # the delimiter is the next word
    if len(words) > 1 and words[-2].source in ("<<", "<<-"):
        source = words[-2].source + source
    match = re.match(r"\d*<<(-?)(?!<)", source)
    if not match or len(source) == match.end():
        return None
    return re.sub(r"[\"'\\]", "", source[match.end() :]), bool(match.group(1))


def _skip_heredoc(s: _Scanner, delimiter: str, tabs: bool) -> None:
    """The body of a here-document is text for the command, not script: skipped up to its delimiter line."""
    while s.i < len(s.text):
        end = s.text.find("\n", s.i)
        line = s.text[s.i : end if end >= 0 else len(s.text)]
        s.take(len(line) + (1 if end >= 0 else 0))
        if (line.lstrip("\t") if tabs else line) == delimiter:
            return


def _word(s: _Scanner) -> _Raw:
    raw = _Raw([], s.line, s.col)
    start = s.i
    try:
        _word_pieces(s, raw)
    finally:
        raw.source = s.text[start : s.i]
    return raw


def _word_pieces(s: _Scanner, raw: _Raw) -> None:
    while s.i < len(s.text):
        ch = s.peek()
        if ch == "\\" and s.peek(1) == "\n":
            s.take(2)
            continue
        if ch in " \t" or ch in _SEPARATORS:
            if ch == "(" and raw.pieces and raw.plain().endswith("=") and _ASSIGN.fullmatch(raw.plain()):
                s.take()
                raw.array = _array_items(s)
            break
        if ch == "'":
            s.take()
            raw.pieces.append(("single", s.until_matching("'", "'")))
        elif ch == '"':
            s.take()
            raw.pieces.extend(_double_quoted(s))
        elif ch == "\\":
            s.take()
            raw.pieces.append(("literal", s.take()))
        elif ch == "$" or ch == "`":
            raw.pieces.append(("dollar", _dollar(s)))
        else:
            raw.pieces.append(("literal", s.take()))


def _array_items(s: _Scanner) -> list[_Raw]:
    items: list[_Raw] = []
    while s.i < len(s.text):
        ch = s.peek()
        if ch == ")":
            s.take()
            return items
        if ch in " \t\n" or (ch == "\\" and s.peek(1) == "\n"):
            s.take(2 if ch == "\\" else 1)
        elif ch == "#":
            while s.peek() not in ("\n", ""):
                s.take()
        else:
            start = s.i
            items.append(_word(s))
            if s.i == start:  # a separator inside the parentheses (`;`, `|`, ...): not an item
                s.take()
    raise _Unclosed(")")


def _double_quoted(s: _Scanner) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    while True:
        ch = s.peek()
        if ch == "":
            raise _Unclosed('"', s.line, s.col)
        if ch == '"':
            s.take()
            return pieces
        if ch == "\\" and s.peek(1) in '$`"\\\n':
            s.take()
            escaped = s.take()
            if escaped != "\n":
                pieces.append(("single", escaped))
        elif ch in "$`":
            pieces.append(("qdollar", _dollar(s)))
        else:
            pieces.append(("single", s.take()))


def _dollar(s: _Scanner) -> str:
    """One expansion as written ($X, ${...}, $(...), $((...)), `...`)."""
    if s.peek() == "`":
        s.take()
        return "`" + s.until_matching("`", "`") + "`"
    s.take()
    nxt = s.peek()
    if nxt == "{":
        s.take()
        return "${" + s.until_matching("{", "}") + "}"
    if nxt == "(":
        s.take()
        return "$(" + s.until_matching("(", ")") + ")"
    match = _NAME.match(s.text, s.i)
    if match:
        return "$" + s.take(match.end() - s.i)
    if nxt and nxt in "@*#?$!0123456789-":
        return "$" + s.take()
    return "$"


# --- expansion --------------------------------------------------------------------------------------------------


@dataclass
class Env:
    """What the script has assigned so far: a value, an array, or Unknown (with why)."""

    values: dict[str, str | list[Word] | Unknown] = field(default_factory=dict)
    # Each variable's value as written (a command kept in a string, run later by `eval $CMD`), in pieces: an
    # assignment that extends the variable (`CMD="$CMD more"`) adds a piece.
    written: dict[str, list["Fragment"]] = field(default_factory=dict)
    written_maybe: dict[str, ShellProblem] = field(default_factory=dict)  # a branch that changes a held command
    # A variable set before a branch and assigned again inside it: the value before is kept, and this says which
    # branch may change it (the branch's condition is not evaluated).
    maybe: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str | list[Word] | Unknown | None:
        return self.values.get(name)


def expand(raw: _Raw, env: Env, split: bool = True) -> list[Word]:
    """A raw word expanded: usually one word; "${ARR[@]}" gives one word per item, at the item's position."""
    if len(raw.pieces) == 1 and raw.pieces[0][0] in ("dollar", "qdollar"):
        items = _array_items_of(raw.pieces[0][1], env)
        if items is not None:
            return items
    if split and len(raw.pieces) == 1 and raw.pieces[0][0] == "dollar":
        words = _split_unquoted(raw.pieces[0][1], env)
        if words is not None:
            return words
    parts = [_expand_piece(kind, text, env) for kind, text in raw.pieces]
    return [Word(parts, raw.line, raw.column)]


def _split_unquoted(text: str, env: Env) -> list[Word] | None:
    """An unquoted `$VAR` whose value holds several words (OPTS="a=1 b=2"; cmd $OPTS): the shell splits it into
    words; each is read where the script writes it, so it keeps its line and column. None when the variable is one
    word, or its text is not known."""
    match = re.fullmatch(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", text)
    name = (match.group(1) or match.group(2)) if match else None
    fragments = env.written.get(name or "")
    value = env.get(name or "")
    if not fragments or isinstance(value, list) or (isinstance(value, str) and len(value.split()) < 2):
        return None
    words: list[Word] = []
    for fragment in fragments:
        commands, _ = scan(fragment.text, fragment.line, fragment.column)
        for raw_words, _line in commands:
            for raw in raw_words:
                if _variable_only(raw) == name:
                    continue  # the variable inside its own value: not followed
                words.extend(expand(raw, env))
    return words


def _array_items_of(text: str, env: Env) -> list[Word] | None:
    match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}", text)
    if not match:
        return None
    value = env.get(match.group(1))
    if isinstance(value, list):
        maybe = env.maybe.get(match.group(1))
        if maybe and value:
            first = value[0]
            return [Word(first.parts + [Part("", note=maybe)], first.line, first.column), *value[1:]]
        return value
    if isinstance(value, str):
        return [Word([Part(value)], 0, 0)]
    why = value.why if isinstance(value, Unknown) else f"the array {match.group(1)} is not set in the script"
    return [Word([Part(None, why=why)], 0, 0)]


def _expand_piece(kind: str, text: str, env: Env) -> Part:
    if kind not in ("dollar", "qdollar"):
        return Part(text, literal=True)
    if text.startswith("$((") and text.endswith("))"):
        return _arithmetic(text[3:-2], env)
    if text.startswith("$(") or text.startswith("`"):
        return Part(None, why=f"the command substitution {_short(text)} is not run")
    if text.startswith("${"):
        return _braced(text[2:-1], env)
    name = text[1:]
    if name in ("@", "*"):
        return Part(None, why="the script's own arguments ($@) are not known")
    return _variable(name, env, text)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _variable(name: str, env: Env, written: str) -> Part:
    value = env.get(name)
    if isinstance(value, str):
        return Part(value, note=env.maybe.get(name, ""))
    if isinstance(value, Unknown):
        return Part(None, why=f"{written}: {value.why}")
    if isinstance(value, list):
        return Part(" ".join(w.text or "" for w in value[:1]))  # $ARR is its first item, as in bash
    return Part(None, why=f"{written}: {name} is not set in the script (it comes from the environment)")


def _braced(body: str, env: Env) -> Part:
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(:?[-=])(.*)", body, re.S)
    if match:
        name, op, default = match.groups()
        value = env.get(name)
        if isinstance(value, str) and (value or ":" not in op):
            return Part(value, note=env.maybe.get(name, ""))
        if isinstance(value, Unknown):
            return Part(None, why=f"${{{body}}}: {value.why}")
        default_part = _default(default, env)
        if default_part.text is None:
            return Part(None, why=f"${{{body}}}: {default_part.why}")
        if value == "":
            why = f"{name} is set empty, so its default {default_part.text!r} is taken"
        else:
            why = f"{name} is not set in the script, so its default {default_part.text!r} is taken"
        return Part(default_part.text, note=f"${{{body}}}: {why}")
    if _NAME.fullmatch(body):
        return _variable(body, env, "${" + body + "}")
    return Part(None, why=f"the expansion ${{{_short(body)}}} is not evaluated")


def _default(text: str, env: Env) -> Part:
    """The default of ${X:-default}: itself a word (quotes and nested expansions)."""
    s = _Scanner(text)
    try:
        raw = _word(s)
    except _Unclosed:
        return Part(None, why=f"the default {text!r} does not parse")
    if s.i < len(text):  # spaces in the default: keep them literally
        raw.pieces.append(("literal", text[s.i :]))
    parts = [_expand_piece(kind, piece, env) for kind, piece in raw.pieces]
    if any(p.text is None for p in parts):
        return Part(None, why="; ".join(p.why for p in parts if p.text is None))
    return Part("".join(p.text for p in parts))  # type: ignore[misc]


_ARITH = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,
    ast.Mod: operator.mod,
}


def _arithmetic(expression: str, env: Env) -> Part:
    unknown: list[str] = []

    def name_value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        value = env.get(name)
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            return value.strip()
        unknown.append(name)
        return "0"

    text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|\b([A-Za-z_][A-Za-z0-9_]*)\b", name_value, expression)
    if unknown:
        return Part(None, why=f"$(({expression})): {', '.join(unknown)} not a number the script sets")
    try:
        value = _evaluate(ast.parse(text.replace("/", "//"), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return Part(None, why=f"$(({expression})) is not evaluated")
    return Part(str(value), note=f"$(({expression})) = {value}")


def _evaluate(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return int(_ARITH[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError("not arithmetic")


# --- running the script's assignments ---------------------------------------------------------------------------


def _function_header(words: list[_Raw]) -> tuple[str, list[_Raw]] | None:
    """`name()` or `function name`: the function's name and the words after the header (its `{`, if on the line)."""
    if len(words) >= 2 and words[1].source == "()":
        return words[0].plain(), words[2:]
    if words[0].plain() == "function" and len(words) >= 2:
        rest = words[2:]
        return words[1].plain(), rest[1:] if rest and rest[0].source == "()" else rest
    return None


@dataclass
class Fragment:
    """A piece of a variable's value as written, where it starts in the script (its quotes removed)."""

    text: str
    line: int
    column: int


def read_script(text: str) -> Script:
    """The script's commands with their words expanded in order, following straight-line assignments."""
    raw_commands, problems = scan(text)
    reader = _Reader(Script(problems=problems))
    for words, line in raw_commands:
        reader.take(words, line)
    return reader.script


class _Reader:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.env = Env()
        # what the script is inside: (kind, line, runs); a plain `{ ... }` group runs in turn, a function body and a
        # branch or loop are not run
        self.blocks: list[tuple[str, int, bool]] = []
        self.function: str | None = None  # a function header (`name()`) whose `{` body comes next

    def take(self, words: list[_Raw], line: int) -> None:
        while words and words[0].plain() in _KEYWORDS and len(words[0].pieces) == 1:
            words = words[1:]
        if not words:
            return
        first = words[0].plain() if words[0].pieces else ""
        header = _function_header(words)
        if header is not None:
            self.function, words = header
            if not words:
                return
            first = words[0].plain()
        if first == "{":
            kind = f"function {self.function}" if self.function else "{ } group"
            self.blocks.append((kind, line, self.function is None))
            self.function = None
            words = words[1:]
            if not words:
                return
            first = words[0].plain() if words[0].pieces else ""
        elif first in _OPENERS:
            self.blocks.append((first, line, False))
        if first in _CLOSERS and self.blocks:
            self.blocks.pop()
            return
        shut = [b for b in self.blocks if not b[2]]
        block = f"a `{shut[-1][0]}` at line {shut[-1][1]}" if shut else ""
        held = _command_in_variable(words, self.env)
        if held is not None:
            name = _variable_only(words[0]) or _variable_only(words[-len(held[1]) - 1])
            if name in self.env.written_maybe:
                self.script.problems.append(self.env.written_maybe[name])
            self.evaluate(*held)
            return
        expanded = _assign_or_expand(words, self.env, block)
        if expanded is not None:
            self.script.commands.append(Command(expanded, line, len(shut), block))

    def evaluate(self, fragments: list[Fragment], extra: list[_Raw]) -> None:
        """`eval $CMD` (or `$CMD ...`, `bash -c "$CMD"`): the command the variable holds, read where it is written;
        the pieces an extending assignment added continue its last command."""
        commands: list[tuple[list[_Raw], int]] = []
        for index, fragment in enumerate(fragments):
            found, problems = scan(fragment.text, fragment.line, fragment.column)
            self.script.problems.extend(problems)
            if index and commands and found:
                commands[-1] = (commands[-1][0] + found[0][0], commands[-1][1])
                found = found[1:]
            commands.extend(found)
        if commands and extra:
            commands[-1] = (commands[-1][0] + extra, commands[-1][1])
        for words, line in commands:
            if _command_in_variable(words, self.env) is None:  # a variable that runs itself is not followed
                self.take(words, line)


def _assign_or_expand(words: list[_Raw], env: Env, block: str) -> list[Word] | None:
    """Assignments update env (and return None); any other command comes back expanded."""
    start = 1 if words[0].plain() in ("export", "local", "declare", "readonly") else 0
    assignments = [
        w for w in words[start:] if _ASSIGN.match(w.plain() if w.pieces and w.pieces[0][0] == "literal" else "")
    ]
    if words[start:] and len(assignments) == len(words[start:]):
        for raw in assignments:
            _assign(raw, env, block)
        return None
    expanded: list[Word] = []
    for raw in words:
        expanded.extend(expand(raw, env))
    return expanded


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _variable_only(raw: _Raw) -> str | None:
    """The name of the variable a word is made of alone (`$CMD`, `"${CMD}"`), else None."""
    if len(raw.pieces) != 1 or raw.pieces[0][0] not in ("dollar", "qdollar"):
        return None
    match = _VARIABLE.fullmatch(raw.pieces[0][1])
    return (match.group(1) or match.group(2)) if match else None


def _command_in_variable(words: list[_Raw], env: Env) -> tuple[list[Fragment], list[_Raw]] | None:
    """A command run from a variable's text (`eval $CMD ...`, `$CMD ...`, `bash -c "$CMD"`): its pieces and the
    words that follow it."""
    first = words[0].plain() if words[0].pieces and words[0].pieces[0][0] == "literal" else ""
    at = 1 if first == "eval" else 2 if first in ("bash", "sh") and len(words) > 2 and words[1].plain() == "-c" else 0
    if at >= len(words):
        return None
    name = _variable_only(words[at])
    if name is None or not env.written.get(name):
        return None
    return env.written[name], words[at + 1 :]


def _fragment(source: str, line: int, column: int) -> Fragment:
    """A value as written, its outer quotes removed (and in double quotes, the escapes the shell removes)."""
    if len(source) >= 2 and source[0] == source[-1] == '"':
        inner = re.sub(r'\\([$`"\\])', r"\1", source[1:-1])
        return Fragment(inner, line, column + 1)
    if len(source) >= 2 and source[0] == source[-1] == "'":
        return Fragment(source[1:-1], line, column + 1)
    return Fragment(source, line, column)


def _remember_written(raw: _Raw, name: str, prefix: int, append: bool, env: Env) -> None:
    value = _fragment(raw.source[prefix:], raw.line, raw.column + prefix)
    itself = re.match(rf"\$(?:\{{{name}\}}|{name}\b)", value.text)
    if itself:  # CMD="$CMD more": the piece after the variable continues its command
        append = True
        value = Fragment(value.text[itself.end() :], value.line, value.column + itself.end())
    env.written[name] = (env.written.get(name, []) if append else []) + [value]


def _assign(raw: _Raw, env: Env, block: str) -> None:
    match = _ASSIGN.match(raw.plain())
    assert match is not None
    name, append = match.group(1), match.group(2) == "+"
    if block and name in env.written:
        env.written_maybe[name] = ShellProblem(
            raw.line,
            raw.column,
            f"{name} is changed inside {block}; the command it holds is read as when that branch is not run",
            "info",
        )
    if block:
        before = env.get(name)
        if isinstance(before, (str, list)):  # keep the value before, and say the branch may change it
            env.maybe[name] = (
                f"{name} is {'extended' if append else 'assigned'} again inside {block} (line "
                f"{raw.line}); the value before it is taken, as when that branch is not run"
            )
        else:
            env.values[name] = Unknown(f"{name} is assigned only inside {block}, which is not run")
        return
    if raw.array is not None:
        items = [word for item in raw.array for word in expand(item, env)]
        before = env.get(name)
        env.values[name] = (before if append and isinstance(before, list) else []) + items
        return
    _remember_written(raw, name, len(match.group(0)), append, env)
    word = _value_word(raw, len(match.group(0)), env)
    if word.known:
        before = env.get(name)
        env.values[name] = (before if append and isinstance(before, str) else "") + (word.text or "")
        if word.notes:  # a default taken on the way: said wherever the variable is used
            env.maybe[name] = "; ".join(word.notes)
        else:
            env.maybe.pop(name, None)
    else:
        env.values[name] = Unknown(word.why)


def _value_word(raw: _Raw, prefix: int, env: Env) -> Word:
    pieces: list[tuple[str, str]] = []
    skip = prefix
    for kind, text in raw.pieces:
        if skip and kind == "literal":
            take = min(skip, len(text))
            skip -= take
            text = text[take:]
            if not text:
                continue
        pieces.append((kind, text))
    return expand(_Raw(pieces, raw.line, raw.column), env, split=False)[0]  # an assignment's value is not split
