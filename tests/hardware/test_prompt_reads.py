"""Prompt lengths stay fast on any file: the count stops at PROMPT_CHARS characters of prompts and says so, a JSON
array is read element by element (never parsed whole), a text file only to READ_BYTES, a CSV field too long for
the csv module or a cut-off file ends the rows without a traceback; a count is kept until its files or tokenizer
change; relative paths are read from the folder the surface names (the service's) and named relative to it."""

import json
import os

import pytest

from grpo_schema.engine.hardware import prompt_rows, prompts
from grpo_schema.engine.hardware.prompts import PROMPT_CHARS, data_prompt_lengths
from grpo_schema.engine.hardware.reads import LocalReads


def rows_of(count, chars=40):
    return [{"prompt": [{"role": "user", "content": f"{i:06d} " + "x" * (chars - 7)}]} for i in range(count)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_count_stops_at_the_character_budget_and_says_so(tmp_path):
    per_prompt = 1000
    data = write_jsonl(tmp_path / "train.jsonl", rows_of(5000, per_prompt))
    got = data_prompt_lengths(str(data))
    assert got.rows == PROMPT_CHARS // per_prompt and not got.whole
    assert f"the first {got.rows} rows (the first {PROMPT_CHARS:,} characters of prompts) of {data}" in got.describe()
    small = data_prompt_lengths(str(write_jsonl(tmp_path / "small.jsonl", rows_of(5000, 100))))
    assert small.rows == 5000 and small.whole and "of 5000 rows of" in small.describe()
    # the first prompt is always counted, however long
    alone = data_prompt_lengths(str(write_jsonl(tmp_path / "one.jsonl", rows_of(2, PROMPT_CHARS * 2))))
    assert alone.rows == 1 and alone.longest == -(-(PROMPT_CHARS * 2 + 16) // 4)


def test_a_json_array_is_read_element_by_element(tmp_path, monkeypatch):
    rows = rows_of(300)
    text = json.dumps(rows)
    cut = tmp_path / "cut.json"  # a file still being written: a whole parse fails, its first rows do not
    cut.write_text(text[: len(text) * 2 // 3])
    got = data_prompt_lengths(str(cut))
    assert 150 < got.rows < 300 and got.whole
    monkeypatch.setattr(prompt_rows, "READ_BYTES", 4096)
    monkeypatch.setattr(prompt_rows, "CHUNK", 1024)
    big = tmp_path / "big.json"
    big.write_text(text)
    bounded = data_prompt_lengths(str(big))
    assert bounded.rows <= 4096 // len(json.dumps(rows[0])) < 300
    # {"data": [...]} is parsed whole, and only within READ_BYTES
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"data": rows[:20]}))
    assert data_prompt_lengths(str(wrapped)).rows == 20
    wrapped.write_text(json.dumps({"data": rows}))
    assert data_prompt_lengths(str(wrapped)) is None


def test_text_files_are_read_only_to_read_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(prompt_rows, "READ_BYTES", 10_000)
    data = write_jsonl(tmp_path / "train.jsonl", rows_of(1000))
    line = len(json.dumps(rows_of(1)[0])) + 1
    assert data_prompt_lengths(str(data)).rows == 10_000 // line
    one_line = tmp_path / "one-line.jsonl"  # a first line longer than the bound: no rows, no hang
    one_line.write_text(json.dumps({"prompt": "x" * 20_000}) + "\n")
    assert data_prompt_lengths(str(one_line)) is None


def test_a_csv_field_too_long_for_the_csv_module_ends_the_rows(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("prompt\n" + "".join(f"question {i}\n" for i in range(10)) + "y" * 200_000 + "\nlast\n")
    got = data_prompt_lengths(str(path))
    assert got.rows == 10 and got.longest == 3  # "question 9": 10 characters at 4 a token


def test_a_count_is_kept_until_its_files_change(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", rows_of(50))
    first = data_prompt_lengths(str(data))
    assert data_prompt_lengths(str(data)) is first  # not counted again
    write_jsonl(data, rows_of(50, 400))
    os.utime(data, ns=(data.stat().st_atime_ns, data.stat().st_mtime_ns + 10**9))
    again = data_prompt_lengths(str(data))
    assert again is not first and again.p50 > first.p50
    assert data_prompt_lengths(str(data), column="question") is None  # another column: its own count


def test_relative_paths_are_read_from_the_folder_given_and_named_from_it(tmp_path, monkeypatch):
    base = tmp_path / "service"
    write_jsonl((base / "data").mkdir(parents=True) or base / "data" / "train.jsonl", rows_of(12))
    monkeypatch.chdir(tmp_path)
    assert data_prompt_lengths("data") is None  # not in the working directory
    got = data_prompt_lengths("data", reads=LocalReads(base=base))
    assert got.rows == 12 and got.source == "data/train.jsonl"
    refused = LocalReads(model=False, base=base, refused={"model_name_or_path": "not read here"})
    estimated = data_prompt_lengths("data", model="some/model", reads=refused)
    assert estimated.counted == "estimated at 4 characters a token (not read here)"


def test_the_kept_counts_are_bounded():
    kept = prompts.KeptCounts(2)
    for key in "abc":
        kept.put(key, key)
    assert kept.get("a") is None and kept.get("b") == "b" and kept.get("c") == "c"


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    monkeypatch.setattr(prompts, "COUNTS", prompts.KeptCounts(prompts.KEPT_COUNTS))
