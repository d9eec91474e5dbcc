"""A .py script or an .ipynb notebook as one Python module to read, with where each line came from.

A notebook's code cells are read in order as one module (a constant set in an earlier cell is seen by a later
one, as when the notebook runs top to bottom); IPython's `!shell` and `%magic` lines are blanked, keeping every
line where it was, and a cell that is not Python is left out with a diagnostic naming its cell and line.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field

MAX_BYTES = 5_000_000  # notebooks with outputs run to megabytes; the code in them rarely passes 200 KB
MAX_CELLS = 5_000
_PASSTHROUGH_CELL_MAGICS = ("%%capture", "%%time", "%%timeit")


@dataclass
class Problem:
    message: str
    line: int | None = None  # in the module as read (see Source.place)
    column: int | None = None
    hint: str = ""
    cell: int | None = None
    cell_line: int | None = None
    newer: bool = False  # a line of syntax newer than this Python's parser: left out, the rest read


@dataclass
class Source:
    """The module text, and for a notebook the (cell, line in cell) of every module line."""

    text: str
    notebook: bool = False
    lines: list[tuple[int, int]] = field(default_factory=list)  # module line - 1 -> (cell index, 1-based line)
    cells: dict[int, str] = field(default_factory=dict)  # code cell index -> its source as written
    raw: str = ""  # every line as written, magics included (where install lines are)
    tree: ast.Module | None = None
    problems: list[Problem] = field(default_factory=list)

    def place(self, line: int | None) -> tuple[int | None, int | None]:
        """(cell, line in the cell) of a module line; (None, line) for a script."""
        if line is None or not self.notebook:
            return None, line
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return None, None


def read_source(data: bytes | str, path: str) -> Source:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if len(text) > MAX_BYTES:
        source = Source("", notebook=path.endswith(".ipynb"))
        source.problems.append(
            Problem(
                f"the file is {len(text):,} characters, more than the {MAX_BYTES:,} read",
                line=1,
                column=1,
                hint="clear the notebook's outputs (they hold most of "
                "its size), or check the GRPOConfig call from a smaller file",
            )
        )
        return source
    if path.endswith(".ipynb"):
        return _parsed(_notebook(text))
    return _parsed(Source(text, raw=text))


def _notebook(text: str) -> Source:
    source = Source("", notebook=True, raw="")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        source.problems.append(
            Problem(
                f"the notebook is not valid JSON: {exc}",
                line=1,
                column=1,
                hint="open and save it in Jupyter, or check the file was not cut short",
            )
        )
        return source
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        source.problems.append(
            Problem(
                "the notebook has no `cells` list (not a Jupyter notebook of format 4)",
                line=1,
                column=1,
                hint="save it with a current Jupyter",
            )
        )
        return source
    if len(cells) > MAX_CELLS:
        source.problems.append(
            Problem(
                f"the notebook has {len(cells):,} cells; only the first {MAX_CELLS:,} are read",
                line=1,
                column=1,
                hint="split the notebook",
            )
        )
    out: list[str] = []
    raw: list[str] = []
    for index, cell in enumerate(cells[:MAX_CELLS]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        body = cell.get("source", "")
        body = "".join(str(s) for s in body) if isinstance(body, list) else str(body)
        source.cells[index] = body
        raw.append(body)
        for number, line in enumerate(_python_lines(body), start=1):
            out.append(line)
            source.lines.append((index, number))
    source.text = "\n".join(out) + "\n"
    source.raw = "\n".join(raw)
    return source


def _python_lines(body: str) -> list[str]:
    """The cell's lines with IPython's own syntax blanked (same number of lines, so positions hold)."""
    lines = body.split("\n")
    if lines and lines[0].lstrip().startswith("%%") and not lines[0].lstrip().startswith(_PASSTHROUGH_CELL_MAGICS):
        return ["" for _ in lines]  # %%bash, %%writefile ...: the cell is not Python
    out = []
    continued = False
    for line in lines:
        stripped = line.lstrip()
        if continued:  # the rest of a shell command continued with a backslash
            out.append("")
            continued = stripped.endswith("\\")
            continue
        if stripped.startswith(("!", "%")) or (stripped.endswith("?") and not stripped.startswith("#")):
            indent = line[: len(line) - len(stripped)]
            out.append(indent + "pass" if indent else "")
            continued = stripped.endswith("\\")
            continue
        out.append(line)
    return out


MAX_LEFT_OUT = 50  # lines or cells left out before the file is given up as unreadable


def _parsed(source: Source) -> Source:
    """The module parsed; what this Python cannot parse is left out and said, the rest still read: a line of
    newer syntax (an f-string Python 3.12 allows), or a notebook's broken cell."""
    if source.problems and not source.text:
        return source
    lines = source.text.split("\n")
    for _ in range(MAX_LEFT_OUT):
        tree, problem = _parse("\n".join(lines))
        if tree is not None:
            source.tree = tree
            return source
        if problem is None or problem.line is None or not 1 <= problem.line <= len(lines):
            break
        if problem.message.startswith("Python syntax error: f-string"):  # newer syntax: only this line goes
            problem.newer = True
            line = lines[problem.line - 1]
            # An empty string stands in: valid as a statement and inside an expression (a concatenation, an item).
            tail = "," if line.rstrip().endswith(",") else ""
            lines[problem.line - 1] = line[: len(line) - len(line.lstrip())] + '""' + tail
        elif source.notebook:  # a broken cell: the other cells are read
            cell = source.place(problem.line)[0]
            lines = [text if owner != cell else "" for text, (owner, _) in zip(lines, source.lines)]
        else:
            source.problems.append(problem)
            return source
        source.problems.append(problem)
    source.problems.append(
        Problem(
            "the file could not be parsed as Python", line=1, column=1, hint="check it runs with `python -m py_compile`"
        )
    )
    return source


def _parse(text: str) -> tuple[ast.Module | None, Problem | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in user strings are not our finding
            return ast.parse(text), None
    except SyntaxError as exc:
        return None, Problem(
            f"Python syntax error: {exc.msg}",
            line=exc.lineno,
            column=exc.offset,
            hint="fix the syntax (the file cannot run as written); the GRPOConfig calls are read once it parses",
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, Problem(
            f"the file cannot be read as Python: {type(exc).__name__}",
            line=1,
            column=1,
            hint="check the file is Python source text",
        )


# --- the TRL release a file installs ---------------------------------------------------------------------------------
_INSTALL = re.compile(r"pip\s+install|Tested with|uv\s+add", re.I)
_TRL_PIN = re.compile(r"""(?<![\w.-])trl(?:\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>)\s*v?(\d+(?:\.\d+){1,2})""", re.I)
_UNSLOTH_PIN = re.compile(r"""(?<![\w.-])unsloth\s*==\s*(\d{4})\.(\d{1,2})""", re.I)


@dataclass(frozen=True)
class InstallPin:
    spec: str  # '==0.22.2'
    line: int  # in Source.raw
    text: str  # the line as written


def install_pins(raw: str) -> list[InstallPin]:
    """The `trl` specifiers on the file's install lines (`!pip install trl==0.22.2`, an exported
    `get_ipython().system('pip install ...')`, a 'Tested with trl==X' comment, a PEP 723 `# /// script`
    dependency), in file order."""
    found = []
    declared = _script_metadata_lines(raw)
    for number, line in _logical_lines(raw):
        if not _INSTALL.search(line) and number not in declared:
            continue
        for match in _TRL_PIN.finditer(line):
            found.append(InstallPin(match.group(1) + match.group(2), number, line.strip()[:200]))
    return found


_SCRIPT_START = re.compile(r"^# /// script\s*$")
_SCRIPT_END = re.compile(r"^# ///\s*$")


def _script_metadata_lines(raw: str) -> set[int]:
    """The lines of a PEP 723 `# /// script` block (its `dependencies = ["trl==0.26.2", ...]` are what `uv run`
    and marimo's sandbox install), numbered as _logical_lines numbers them."""
    inside, out = False, set()
    for number, line in enumerate(raw.split("\n"), start=1):
        if not inside and _SCRIPT_START.match(line):
            inside = True
        elif inside and _SCRIPT_END.match(line):
            inside = False
        elif inside:
            out.add(number)
    return out


def _logical_lines(raw: str) -> list[tuple[int, str]]:
    """(first line number, text) of each command, a line continued with a backslash joined to the next."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(raw.split("\n"), start=1):
        start, text = pending if pending else (number, "")
        text += line.rstrip()
        if text.endswith("\\") and len(text) < 10_000:
            pending = (start, text[:-1] + " ")
            continue
        pending = None
        out.append((start, text))
    if pending:
        out.append(pending)
    return out


def unsloth_release_pin(raw: str) -> tuple[int, int] | None:
    """(year, month) of an `unsloth==YYYY.M.x` install pin: Unsloth's own trl requirement follows its date."""
    declared = _script_metadata_lines(raw)
    for number, line in _logical_lines(raw):
        if _INSTALL.search(line) or number in declared:
            match = _UNSLOTH_PIN.search(line)
            if match:
                return int(match.group(1)), int(match.group(2))
    return None


# --- notebook positions in the .ipynb file itself (for SARIF and GitHub annotations) --------------------------------
_CELL_PATH = re.compile(r"^(?P<file>.*\.ipynb)\[cell (?P<cell>\d+)\]$")


def split_cell_path(path: str) -> tuple[str, int | None]:
    """'nb.ipynb[cell 5]' -> ('nb.ipynb', 5); any other path -> (path, None)."""
    match = _CELL_PATH.match(path)
    return (match.group("file"), int(match.group("cell"))) if match else (path, None)


def file_line(text: str, cell: int, line: int) -> int | None:
    """The line of the .ipynb file that holds line `line` of cell `cell`'s source, where the notebook is written
    one source line a JSON line (as Jupyter writes it); None where it is not."""
    try:
        cells = json.loads(text)["cells"]
        body = cells[cell]["source"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        return None
    lines = text.split("\n")
    found = -1
    for _ in range(cell + 1):  # the n-th "source" key is the n-th cell's (Jupyter writes it once a cell)
        found = next((i for i in range(found + 1, len(lines)) if lines[i].lstrip().startswith('"source"')), -1)
        if found < 0:
            return None
    if not isinstance(body, list) or not body:
        return found + 1
    target = found + line  # `"source": [` then one element a line
    if target < len(lines) and json.dumps(body[line - 1])[:40] in lines[target]:
        return target + 1
    return None
