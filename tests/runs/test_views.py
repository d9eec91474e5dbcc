"""The completions, compare and download endpoints, on real runs of the tiny model (real service, real files)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas
import pytest

from tests.support.run_config import run_yaml

pytestmark = pytest.mark.slow


def get(service, path: str, **params):
    with service.client() as client:
        return client.get(f"/api/v1/runs{path}", params=params)


@pytest.fixture
def finished(make_service, assets):
    """A service with two finished runs: one logging every completion, one with the runtime's sample and a KL
    penalty (beta > 0: a reference model, and a kl curve)."""
    service = make_service()
    logged = service.launch(run_yaml(assets, max_steps=3, log_completions=True))
    sampled = service.launch(run_yaml(assets, max_steps=3, learning_rate=0.02, beta=0.04))
    for run in (logged, sampled):
        service.wait_state(run["id"], ("succeeded",))
    return service, logged["id"], sampled["id"]


def test_completions_pages_bounds_malformed_lines_and_downloads(finished):
    service, run_id, sampled_id = finished
    page = get(service, f"/{run_id}/completions").json()
    assert page["source"] == "completions.jsonl" and page["total"] == 3 * 8 and page["skipped"] == 0
    assert page["steps"] == [0, 1, 2]
    row = page["rows"][0]
    assert set(row) >= {"step", "prompt", "completion", "rewards", "reward", "advantage", "length", "truncated"}
    assert set(row["rewards"]) == {"target_word_reward"} and isinstance(row["completion"], str)
    assert [r["index"] for r in get(service, f"/{run_id}/completions", limit=5, offset=20).json()["rows"]] == [
        20,
        21,
        22,
        23,
    ]
    assert [r["index"] for r in get(service, f"/{run_id}/completions", step=1, limit=2, offset=1).json()["rows"]] == [
        9,
        10,
    ]
    assert {r["step"] for r in get(service, f"/{run_id}/completions", step=1).json()["rows"]} == {1}
    for bad in (
        dict(limit=201),
        dict(limit=0),
        dict(offset=-1),
        dict(step="x"),
        dict(full=1, limit=2),
        dict(sort="best"),
        dict(min="nan"),
        dict(min="inf"),
        dict(q="x" * 501),
    ):
        answer = get(service, f"/{run_id}/completions", **bad)
        assert answer.status_code == 422 and "detail" in answer.json(), bad
    assert get(service, "/ffffffffffff/completions").status_code == 404
    with service.client(token=None) as client:
        assert client.get(f"/api/v1/runs/{run_id}/completions").status_code == 401

    sample = get(service, f"/{sampled_id}/completions").json()  # log_completions off: the runtime's sample
    assert sample["source"] == "completions-sample.jsonl" and 0 < sample["total"] <= 3 * 2 * 4

    # a damaged file: bad lines are skipped and counted, a 5 MB completion is cut unless asked for whole
    path = Path(service.run(run_id)["output_dir"]) / "completions.jsonl"
    huge = {"step": 7, "prompt": "p", "completion": "<b>x</b>" * 655_360, "rewards": {"f": 1}, "advantage": 0}
    with path.open("a") as handle:
        handle.write("not json\n" + json.dumps({"step": "x", "completion": "c"}) + "\n" + json.dumps(huge) + "\n")
        handle.write('{"step": 9, "compl')  # cut short mid-write
    page = get(service, f"/{run_id}/completions", step=7).json()
    assert page["total"] == 1 and page["skipped"] == 3
    assert [note["line"] for note in page["skipped_lines"]] == [25, 26, 28]
    cut = page["rows"][0]
    assert cut["completion_cut"] and len(cut["completion"]) == 20_000 and cut["completion_chars"] == 8 * 655_360
    assert cut["reward"] == 1
    assert cut["index"] == 24  # its place among the file's rows
    whole = get(service, f"/{run_id}/completions", step=7, limit=1, full=1).json()["rows"][0]
    assert whole["completion"] == huge["completion"] and not whole["completion_cut"]

    # paging past the most one request serves (200): a step of 450 rows, appended to the file the run wrote
    with path.open("a") as handle:
        handle.write("\n")  # ends the cut-short line: now a damaged line in the middle of the file
        for i in range(450):
            handle.write(
                json.dumps(
                    {
                        "step": 20,
                        "prompt": f"p{i // 8}",
                        "completion": f"c{i}",
                        "rewards": {"f": i / 450},
                        "advantage": 0.0,
                    }
                )
                + "\n"
            )
    pages = [
        get(service, f"/{run_id}/completions", step=20, limit=200, offset=offset).json() for offset in (0, 200, 400)
    ]
    assert [p["total"] for p in pages] == [450] * 3 and [len(p["rows"]) for p in pages] == [200, 200, 50]
    assert [r["completion"] for p in pages for r in p["rows"]] == [f"c{i}" for i in range(450)]
    assert pages[2]["rows"][-1]["index"] == 24 + 1 + 449 and pages[0]["steps"] == [0, 1, 2, 7, 20]

    answer = get(service, f"/{run_id}/metrics.csv")
    assert answer.status_code == 200 and 'attachment; filename="' in answer.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [int(r["step"]) for r in rows] == [1, 2, 3] and float(rows[0]["reward"]) >= 0
    lines = [json.loads(x) for x in get(service, f"/{run_id}/metrics.jsonl").text.splitlines()]
    assert [x["step"] for x in lines] == [1, 2, 3]
    download = get(service, f"/{run_id}/completions.jsonl")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert download.headers["x-skipped-lines"] == "3"  # the damaged lines are left out of the download
    written = path.read_bytes().splitlines(keepends=True)
    assert download.content == b"".join(written[i] for i in range(len(written)) if i not in (24, 25, 27))

    # the downloads open in pandas, the damaged completions file too
    frame = pandas.read_csv(io.StringIO(answer.text))
    assert list(frame["step"]) == [1, 2, 3] and "reward" in frame.columns and frame["reward"].notna().all()
    metrics = pandas.read_json(io.StringIO(get(service, f"/{run_id}/metrics.jsonl").text), lines=True)
    assert list(metrics["step"]) == [1, 2, 3] and list(metrics["reward"]) == list(frame["reward"])
    rows = pandas.read_json(io.BytesIO(download.content), lines=True)
    assert len(rows) == 24 + 1 + 450 and list(rows["step"].drop_duplicates()) == [0, 1, 2, 7, 20]
    assert rows["completion"].iloc[24] == huge["completion"] and rows["completion"].iloc[-1] == "c449"


def test_compare_two_runs(finished):
    service, first, second = finished
    answer = get(service, "/compare", ids=f"{first},{second}")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert [r["id"] for r in found["runs"]] == [first, second]
    for run in found["runs"]:
        assert [point[0] for point in run["curves"]["reward"]] == [1, 2, 3]
        assert run["curves"]["completions/mean_length"]
    # the run with beta > 0 has a KL curve; the one without a KL penalty logs none
    assert [point[0] for point in found["runs"][1]["curves"]["kl"]] == [1, 2, 3]
    assert all(value >= 0 for _, value in found["runs"][1]["curves"]["kl"])
    assert found["runs"][0]["curves"]["kl"] == []
    assert found["config_differences"] == {
        "beta": {first: 0.0, second: 0.04},
        "learning_rate": {first: 0.01, second: 0.02},
        "log_completions": {first: True, second: None},
    }
    for bad in (first, f"{first},nope", f"{first},{first}", ",".join([first] * 9), ""):
        answer = get(service, "/compare", ids=bad)
        assert answer.status_code == 422 and "detail" in answer.json(), bad
    assert get(service, "/compare", ids=f"{first},ffffffffffff").status_code == 404
