"""Words of a shell script as written: split into commands, quoting and here-documents respected, each word's
pieces (literal, quoted, expansions) kept with where it starts. Nothing is expanded here."""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")


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
class ShellProblem:
    line: int
    column: int
    message: str
    severity: str = "error"  # "info": how the script was read, not a problem


class Scanner:
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
        raise Unclosed(closer, *opened_at)


class Unclosed(Exception):
    def __init__(self, closer: str, line: int = 0, column: int = 0) -> None:
        super().__init__(closer)
        self.closer, self.line, self.column = closer, line, column


@dataclass
class RawWord:
    """A word as written: its pieces before expansion, as (kind, text) with kind literal, single (quoted text),
    dollar (an expansion outside quotes, which the shell splits into words) or qdollar (one inside double quotes)."""

    pieces: list[tuple[str, str]]
    line: int
    column: int
    array: list["RawWord"] | None = None  # `NAME=( ... )`: the items
    source: str = ""  # the word as written in the script

    def plain(self) -> str:
        return "".join(text for kind, text in self.pieces if kind in ("literal", "single"))


_SEPARATORS = {";", "&", "|", "\n", "(", ")"}


def scan(text: str, line: int = 1, col: int = 1) -> tuple[list[tuple[list[RawWord], int]], list[ShellProblem]]:
    """The commands of a script (or of a piece of one that starts at line, col) as lists of raw words, with the line
    each starts on."""
    s = Scanner(text.replace("\r\n", "\n"), line, col)
    commands: list[tuple[list[RawWord], int]] = []
    problems: list[ShellProblem] = []
    words: list[RawWord] = []
    heredocs: list[tuple[str, bool]] = []  # here-documents whose bodies start after this line: (delimiter, <<-)
    start_line = 1
    while s.i < len(s.text):
        if _skipped_blank_or_header(s, words):
            continue
        ch = s.peek()
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
            words.append(read_word(s))
            heredoc = _heredoc_start(words)
            if heredoc is not None:
                heredocs.append(heredoc)
        except Unclosed as exc:
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


def _skipped_blank_or_header(s: Scanner, words: list[RawWord]) -> bool:
    """Step over a line continuation, a blank, a comment, or a function header's `()` (added to `words`); True
    when something was stepped over."""
    ch = s.peek()
    if ch == "\\" and s.peek(1) == "\n":
        s.take(2)
        return True
    if ch in " \t":
        s.take()
        return True
    if ch == "#":
        while s.peek() not in ("\n", ""):
            s.take()
        return True
    if ch == "(" and words and re.match(r"\(\s*\)", s.text[s.i :]):  # `name()`: a function header
        s.take(re.match(r"\(\s*\)", s.text[s.i :]).end())  # type: ignore[union-attr]
        words.append(RawWord([("literal", "()")], s.line, s.col, source="()"))
        return True
    return False


def _heredoc_start(words: list[RawWord]) -> tuple[str, bool] | None:
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


def _skip_heredoc(s: Scanner, delimiter: str, tabs: bool) -> None:
    """The body of a here-document is text for the command, not script: skipped up to its delimiter line."""
    while s.i < len(s.text):
        end = s.text.find("\n", s.i)
        line = s.text[s.i : end if end >= 0 else len(s.text)]
        s.take(len(line) + (1 if end >= 0 else 0))
        if (line.lstrip("\t") if tabs else line) == delimiter:
            return


def read_word(s: Scanner) -> RawWord:
    raw = RawWord([], s.line, s.col)
    start = s.i
    try:
        _word_pieces(s, raw)
    finally:
        raw.source = s.text[start : s.i]
    return raw


def _word_pieces(s: Scanner, raw: RawWord) -> None:
    while s.i < len(s.text):
        ch = s.peek()
        if ch == "\\" and s.peek(1) == "\n":
            s.take(2)
            continue
        if ch in " \t" or ch in _SEPARATORS:
            if ch == "(" and raw.pieces and raw.plain().endswith("=") and ASSIGNMENT.fullmatch(raw.plain()):
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


def _array_items(s: Scanner) -> list[RawWord]:
    items: list[RawWord] = []
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
            items.append(read_word(s))
            if s.i == start:  # a separator inside the parentheses (`;`, `|`, ...): not an item
                s.take()
    raise Unclosed(")")


def _double_quoted(s: Scanner) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    while True:
        ch = s.peek()
        if ch == "":
            raise Unclosed('"', s.line, s.col)
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


def _dollar(s: Scanner) -> str:
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
    match = NAME.match(s.text, s.i)
    if match:
        return "$" + s.take(match.end() - s.i)
    if nxt and nxt in "@*#?$!0123456789-":
        return "$" + s.take()
    return "$"
