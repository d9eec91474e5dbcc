"""The completions reader behind GET /api/v1/runs/{id}/completions: pages come from an index of line offsets that is
extended as the file grows (only the new bytes are read) and rebuilt when the file is replaced; a page reads only
its own lines, each up to a byte cap; a huge row is served cut without its line being read again; the download
serves the readable rows. Plain files, no service."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the runs tests need the web extra (pip install -e '.[web]')")

from grpo_web.runs import completion_index, completion_rows, completions  # noqa: E402


def row(step: int, i: int, **extra) -> str:
    return (
        json.dumps(
            {
                "step": step,
                "prompt": f"prompt {i // 4}",
                "completion": f"completion {i}",
                "rewards": {"f": i / 10},
                "advantage": 0.0,
                "length": 3,
                "truncated": False,
                **extra,
            }
        )
        + "\n"
    )


class ReadCounter:
    """Counts the bytes read through Path.open for one file."""

    def __init__(self, monkeypatch, path: Path):
        self.bytes = 0
        original = Path.open
        counter = self

        def spying_open(self_path, *args, **kwargs):
            handle = original(self_path, *args, **kwargs)
            if self_path != path:
                return handle
            read = handle.read

            def counted(*a):
                data = read(*a)
                counter.bytes += len(data)
                return data

            handle.read = counted
            return handle

        monkeypatch.setattr(Path, "open", spying_open)


@pytest.fixture
def folder(tmp_path):
    completion_index._indexes.clear()
    yield tmp_path
    completion_index._indexes.clear()


def test_pages_beyond_the_limit_and_appends_read_only_new_bytes(folder, monkeypatch):
    path = folder / "completions.jsonl"
    path.write_text("".join(row(0, i) for i in range(8)) + "".join(row(1, i) for i in range(450)))
    first = completions.read_page(folder, 1, 200, 0)
    assert first.total == 450 and first.steps == [0, 1] and first.skipped == 0
    assert [r["index"] for r in first.rows] == list(range(8, 208))
    assert [r["index"] for r in completions.read_page(folder, 1, 200, 400).rows] == list(range(408, 458))
    assert completions.read_page(folder, None, 200, 0).total == 458

    counter = ReadCounter(monkeypatch, path)
    page = completions.read_page(folder, 1, 2, 10)  # indexed already: only the page's two lines are read
    assert [r["index"] for r in page.rows] == [18, 19]
    assert counter.bytes == len(row(1, 10)) + len(row(1, 11))

    size = path.stat().st_size
    with path.open("a") as handle:
        handle.write(row(2, 0) + row(2, 1))
    counter.bytes = 0
    page = completions.read_page(folder, 2, 200, 0)
    assert page.total == 2 and page.steps == [0, 1, 2]
    assert counter.bytes == (path.stat().st_size - size) + len(row(2, 0)) + len(row(2, 1))  # the new bytes only


def test_a_replaced_or_rewritten_file_is_indexed_again(folder):
    path = folder / "completions.jsonl"
    path.write_text("".join(row(0, i) for i in range(6)))
    assert completions.read_page(folder, None, 50, 0).total == 6
    replacement = folder / "new.jsonl"
    replacement.write_text(row(5, 0))
    os.replace(replacement, path)  # another inode (a new run of the same output_dir)
    page = completions.read_page(folder, None, 50, 0)
    assert page.total == 1 and page.steps == [5]
    path.write_text(row(7, 1))  # the same size, written again in place
    stamp = path.stat().st_mtime_ns + 5_000_000
    os.utime(path, ns=(stamp, stamp))
    page = completions.read_page(folder, None, 50, 0)
    assert page.steps == [7] and page.rows[0]["completion"] == "completion 1"


def test_a_huge_line_is_served_cut_without_being_read_again_and_whole_on_request(folder, monkeypatch):
    path = folder / "completions.jsonl"
    huge = "<script>x</script>" * 300_000  # 5.4 MB, over the per-line cap
    path.write_text(row(0, 0) + row(0, 1, completion=huge) + row(0, 2))
    page = completions.read_page(folder, 0, 50, 0)
    cut = page.rows[1]
    assert cut["completion_cut"] and len(cut["completion"]) == completion_rows.MAX_CHARS
    assert cut["completion_chars"] == len(huge) and cut["index"] == 1
    counter = ReadCounter(monkeypatch, path)
    again = completions.read_page(folder, 0, 50, 0)
    assert again.rows[1]["completion_cut"] and counter.bytes < completion_index.LINE_CAP_BYTES  # not re-read
    whole = completions.read_page(folder, None, 1, 1, full=True).rows[0]  # the view's "show all"
    assert whole["completion"] == huge and not whole["completion_cut"]


def test_a_line_over_the_hard_limit_is_skipped_and_damage_is_counted(folder, monkeypatch):
    monkeypatch.setattr(completion_index, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(completion_index, "SCAN_CHUNK", 1000)  # the long line spans several slices
    path = folder / "completions.jsonl"
    path.write_text(row(0, 0) + row(0, 1, completion="y" * 10_000) + "not json\n" + row(0, 2) + '{"step": 0, "comp')
    page = completions.read_page(folder, 0, 50, 0)
    assert [r["completion"] for r in page.rows] == ["completion 0", "completion 2"]
    assert page.skipped == 3
    assert [(n["line"], n["reason"].split(" ")[0]) for n in page.skip_notes] == [
        (2, "line"),
        (3, "not"),
        (5, "incomplete"),
    ]
    _, skipped, lines = completions.readable_lines(folder)
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_json(io.BytesIO(b"".join(lines)), lines=True)
    assert skipped == 3 and list(frame["completion"]) == ["completion 0", "completion 2"]


def test_sort_filters_and_marks_act_on_every_row_of_the_step(folder):
    from grpo_web.runs.completion_query import Query

    path = folder / "completions.jsonl"
    # step 1: 12 groups of 4 (prompt i // 4), f = i / 10; every third row truncated; row 45 says "needle"
    path.write_text(
        "".join(row(0, i) for i in range(4))
        + "".join(
            row(1, i, truncated=i % 3 == 0, **({"completion": "a needle here"} if i == 45 else {})) for i in range(48)
        )
    )
    best = completions.read_page(folder, 1, 6, 0, query=Query(sort="fn:f"))
    assert [r["index"] for r in best.rows] == [51, 50, 49, 48, 47, 46]  # the last group first, its best row first
    assert (best.total, best.total_unfiltered, best.functions) == (48, 48, ["f"])
    assert [r["mark"] for r in best.rows] == ["best", None, None, "worst", "best", None]
    low = completions.read_page(folder, 1, 2, 0, query=Query(sort="reward-asc"))
    assert [r["index"] for r in low.rows] == [4, 5]  # no total reward: the sum of the functions' scores
    kept = completions.read_page(folder, 1, 200, 0, query=Query(min_score=4.0, score="f", truncated_only=True))
    assert [r["index"] for r in kept.rows] == [4 + i for i in range(40, 48) if i % 3 == 0]
    assert kept.total == 2 and kept.total_unfiltered == 48
    found = completions.read_page(folder, 1, 200, 0, query=Query(text="NEEDLE"))
    assert [r["index"] for r in found.rows] == [49] and found.rows[0]["completion"] == "a needle here"
    assert completions.read_page(folder, 1, 200, 0, query=Query(text="no such text")).total == 0
    plain = completions.read_page(folder, 1, 4, 0)
    assert [r["mark"] for r in plain.rows] == ["worst", None, None, "best"]
