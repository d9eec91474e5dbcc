"""Reading a run's completions: OUTPUT_DIR/completions.jsonl (log_completions), else the runtime's small sample
(completions-sample.jsonl). grpo_runtime.outputs.completions writes them; this reader never imports the runtime.

Reading is bounded and forgiving:
- Each file has an index of its rows (completion_index), built once and extended as the file grows; a page reads
  only its own lines, a huge line is served cut without being read again, and only `full=1` (one row, asked for by
  the view's "show all") reads it whole again.
- Each row is read as completion_rows reads it: each text cut to MAX_CHARS unless one row is asked for in full, and
  a line that is not a complete JSON object of the expected shape (a run killed mid-write, a hand-edited file) is
  skipped and counted, never an error.
- A page's rows are the ones its query shows (completion_query), and only the run's own (`Bound`) in a file that
  its line shares.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from grpo_web.runs.completion_index import SCAN_CHUNK, LineIndex, index_of, notes
from grpo_web.runs.completion_query import Query, functions, mark, select

FILES = ("completions.jsonl", "completions-sample.jsonl")
MAX_LIMIT = 200


@dataclass
class Page:
    rows: list[dict] = field(default_factory=list)
    total: int = 0
    skipped: int = 0
    skip_notes: list[dict] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    source: str | None = None
    total_unfiltered: int = 0  # rows of the step (or file) before the filters
    functions: list[str] = field(default_factory=list)  # the reward functions scored in the step

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "total": self.total,
            "total_unfiltered": self.total_unfiltered,
            "skipped": self.skipped,
            "skipped_lines": self.skip_notes,
            "steps": self.steps,
            "source": self.source,
            "functions": self.functions,
        }


def source(output_dir: str | Path) -> Path | None:
    for name in FILES:
        path = Path(output_dir) / name
        if path.is_file():
            return path
    return None


@dataclass(frozen=True)
class Bound:
    """The rows that are one run's in a file its line shares: none past its last step (`step`), none from the
    byte where its successor began appending (`end`, when the service knows it)."""

    step: int | None = None
    end: int | None = None


def _rows_until(index: LineIndex, step: int | None, bound: Bound):
    rows = index.by_step.get(step, array("q")) if step is not None else range(len(index.offsets))
    if bound == Bound():
        return rows
    if step is not None and bound.step is not None and step > bound.step:
        return array("q")
    if step is None and bound.step is not None:
        rows = sorted(row for at, found in index.by_step.items() if at <= bound.step for row in found)
    return array("q", [row for row in rows if bound.end is None or index.offsets[row] < bound.end])


def read_page(
    output_dir: str | Path,
    step: int | None,
    limit: int,
    offset: int,
    full: bool = False,
    query: Query = Query(),
    bound: Bound = Bound(),
) -> Page:
    """The rows of a step (or of the file) that the query shows, in its order, from `offset`; `total` counts
    them all, `total_unfiltered` the step's rows. Each row is marked best or worst of its group by the query's
    score. `bound`: only the rows that are the run's own (none its successor wrote in the same output_dir)."""
    page = Page()
    path = source(output_dir)
    if path is None:
        return page
    page.source = path.name
    index = index_of(path)
    with index.lock:
        rows = _rows_until(index, step, bound)
        page.total_unfiltered = len(rows)
        page.steps = sorted(
            at
            for at, found in index.by_step.items()
            if (bound.step is None or at <= bound.step) and (bound.end is None or index.offsets[found[0]] < bound.end)
        )
        page.skipped, page.skip_notes = notes(index)
        page.functions = functions(rows, index.facts)
        page.total = len(rows)
        try:
            with path.open("rb") as handle:
                shown = (
                    rows
                    if query == Query()
                    else select(rows, index.facts, query, lambda row_index: index.texts(handle, row_index))
                )
                page.total = len(shown)
                for row_index in shown[offset : offset + limit]:  # row_index: the row's place among the file's rows
                    row = index.read_row(handle, row_index, full)
                    if row is not None:
                        members = index.groups[index.facts[row_index].group]
                        page.rows.append(
                            row | {"index": row_index, "mark": mark(row_index, index.facts, members, query.score)}
                        )
        except OSError:
            pass
    return page


def restart_offset(output_dir: str | Path, first_step: int, after: int = 0) -> int | None:
    """Where a run that resumed the line at `first_step` began appending to the file its parent wrote, worked out
    from the rows alone (for a database from before the service recorded it): the first row of `first_step`, past
    byte `after` (where the parent's own rows begin), that follows a row of a later step, i.e. where the steps went
    back. None when the steps never went back there (the successor began after the parent's last step: the parent's
    last step bounds its rows already)."""
    path = source(output_dir)
    if path is None:
        return None
    index = index_of(path)
    with index.lock:
        starts = index.by_step.get(first_step, array("q"))
        candidates = [row for row in starts if row > 0 and index.offsets[row] > after]
        if not candidates:
            return None
        step_of = {row: at for at, found in index.by_step.items() for row in found}
        for row in candidates:
            if step_of.get(row - 1, first_step) > first_step:
                return int(index.offsets[row])
    return None


def readable_lines(output_dir: str | Path, bound: Bound = Bound()) -> tuple[Path, int, Iterator[bytes]] | None:
    """The file, how many of its lines are not completion rows, and its completion rows' lines as the run wrote
    them, in slices of at most SCAN_CHUNK (the download: JSON lines any reader takes, whatever damage the file has)."""
    path = source(output_dir)
    if path is None:
        return None
    index = index_of(path)
    with index.lock:
        skipped, _ = notes(index)
        spans = [(index.offsets[row], index.lengths[row]) for row in _rows_until(index, None, bound)]
    return path, skipped, _slices(path, spans)


def _slices(path: Path, spans: list[tuple[int, int]]) -> Iterator[bytes]:
    with path.open("rb") as handle:
        for offset, length in spans:
            handle.seek(offset)
            while length > 0:
                data = handle.read(min(length, SCAN_CHUNK))
                if not data:
                    return
                length -= len(data)
                yield data
