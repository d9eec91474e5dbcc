"""Where a finding in a notebook's cell lies in the .ipynb file, for outputs read by tools that know files, not
cells (SARIF, GitHub annotations): the file, its line, and 'cell N line L: ' to say it in the message."""

from __future__ import annotations


def in_file(path: str, line: int | None, column: int | None) -> tuple[str, int | None, int | None, str]:
    from grpo_schema.dialects.python.source import split_cell_path

    file, cell = split_cell_path(path)
    if cell is None:
        return path, line, column, ""
    prefix = f"cell {cell} line {line}: " if line else f"cell {cell}: "
    found = _file_line(file, cell, line) if line else None
    # The column counts in the cell's line; in the file the line is a JSON string, so the column is left at 1.
    return file, found, 1 if found else None, prefix


def _file_line(file: str, cell: int, line: int) -> int | None:
    from grpo_schema.dialects.python.source import MAX_BYTES, file_line

    try:
        with open(file, "rb") as handle:
            text = handle.read(MAX_BYTES + 1).decode("utf-8", "replace")
    except OSError:
        return None
    return file_line(text, cell, line) if len(text) <= MAX_BYTES else None
