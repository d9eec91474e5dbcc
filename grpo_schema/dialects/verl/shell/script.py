"""A reader of the shell scripts verl runs are launched from: the commands in order, their words expanded.

It runs nothing. Straight-line assignments (`X=1`, `export X=...`, arrays `A=( ... )`, `A+=( ... )`) are
followed; `${X:-default}` takes the default when the script never sets X, and says so; a variable the script
never sets is unknown (it comes from the environment), never guessed. What is assigned inside a branch, a loop or
a function, and any command substitution `$(...)`, is unknown too, with the line that made it so. A command kept in
a variable and run by `eval $CMD` (or `$CMD`, `bash -c "$CMD"`) is read where the variable's value is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from grpo_schema.dialects.verl.shell.expansion import Env, Fragment, Unknown, expand, variable_only
from grpo_schema.dialects.verl.shell.words import ASSIGNMENT, RawWord, ShellProblem, Word, scan

_OPENERS = {"if": "fi", "case": "esac", "for": "done", "while": "done", "until": "done", "select": "done", "{": "}"}
_KEYWORDS = {"then", "do", "else", "!"}  # words that may lead a command inside a block
_CLOSERS = {"fi", "esac", "done", "}"}


@dataclass
class Command:
    words: list[Word]
    line: int
    depth: int  # inside how many branches, loops or functions
    block: str = ""  # the innermost one, as "a `case` at line 12"


@dataclass
class Script:
    commands: list[Command] = field(default_factory=list)
    problems: list[ShellProblem] = field(default_factory=list)


def _function_header(words: list[RawWord]) -> tuple[str, list[RawWord]] | None:
    """`name()` or `function name`: the function's name and the words after the header (its `{`, if on the line)."""
    if len(words) >= 2 and words[1].source == "()":
        return words[0].plain(), words[2:]
    if words[0].plain() == "function" and len(words) >= 2:
        rest = words[2:]
        return words[1].plain(), rest[1:] if rest and rest[0].source == "()" else rest
    return None


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

    def take(self, words: list[RawWord], line: int) -> None:
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
            name = variable_only(words[0]) or variable_only(words[-len(held[1]) - 1])
            if name in self.env.written_maybe:
                self.script.problems.append(self.env.written_maybe[name])
            self.evaluate(*held)
            return
        expanded = _assign_or_expand(words, self.env, block)
        if expanded is not None:
            self.script.commands.append(Command(expanded, line, len(shut), block))

    def evaluate(self, fragments: list[Fragment], extra: list[RawWord]) -> None:
        """`eval $CMD` (or `$CMD ...`, `bash -c "$CMD"`): the command the variable holds, read where it is written;
        the pieces an extending assignment added continue its last command."""
        commands: list[tuple[list[RawWord], int]] = []
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


def _assign_or_expand(words: list[RawWord], env: Env, block: str) -> list[Word] | None:
    """Assignments update env (and return None); any other command comes back expanded."""
    start = 1 if words[0].plain() in ("export", "local", "declare", "readonly") else 0
    assignments = [
        w for w in words[start:] if ASSIGNMENT.match(w.plain() if w.pieces and w.pieces[0][0] == "literal" else "")
    ]
    if words[start:] and len(assignments) == len(words[start:]):
        for raw in assignments:
            _assign(raw, env, block)
        return None
    expanded: list[Word] = []
    for raw in words:
        expanded.extend(expand(raw, env))
    return expanded


def _command_in_variable(words: list[RawWord], env: Env) -> tuple[list[Fragment], list[RawWord]] | None:
    """A command run from a variable's text (`eval $CMD ...`, `$CMD ...`, `bash -c "$CMD"`): its pieces and the
    words that follow it."""
    first = words[0].plain() if words[0].pieces and words[0].pieces[0][0] == "literal" else ""
    at = 1 if first == "eval" else 2 if first in ("bash", "sh") and len(words) > 2 and words[1].plain() == "-c" else 0
    if at >= len(words):
        return None
    name = variable_only(words[at])
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


def _remember_written(raw: RawWord, name: str, prefix: int, append: bool, env: Env) -> None:
    value = _fragment(raw.source[prefix:], raw.line, raw.column + prefix)
    itself = re.match(rf"\$(?:\{{{name}\}}|{name}\b)", value.text)
    if itself:  # CMD="$CMD more": the piece after the variable continues its command
        append = True
        value = Fragment(value.text[itself.end() :], value.line, value.column + itself.end())
    env.written[name] = (env.written.get(name, []) if append else []) + [value]


def _assign(raw: RawWord, env: Env, block: str) -> None:
    match = ASSIGNMENT.match(raw.plain())
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


def _value_word(raw: RawWord, prefix: int, env: Env) -> Word:
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
    return expand(RawWord(pieces, raw.line, raw.column), env, split=False)[0]  # an assignment's value is not split
