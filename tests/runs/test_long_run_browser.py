"""A run of 5000 steps opens at once: GET /api/v1/runs/{id}?metrics=false answers its summary (state, progress,
checkpoints, resume choice) in well under a second, the metrics come by step range, and the runs page shows the
run first and then loads its charts a range at a time, saying so meanwhile. The run is a real record in the
service's database (written with its Store before the service starts, as a finished run of 5000 steps leaves it)."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from grpo_web.runs.store import Store
from tests.runs.conftest import TOKEN
from tests.support.runs_page import page  # noqa: F401  (the page fixture: Chromium, no page errors)

STEPS = 5000
KEYS = [
    "loss",
    "reward",
    "reward_std",
    "kl",
    "entropy",
    "grad_norm",
    "learning_rate",
    "frac_reward_zero_std",
    "completions/mean_length",
    "completions/min_length",
    "completions/max_length",
    "completions/clipped_ratio",
    "clip_ratio/low_mean",
    "clip_ratio/high_mean",
    "clip_ratio/region_mean",
    "rewards/accuracy_reward/mean",
    "rewards/accuracy_reward/std",
    "rewards/format_reward/mean",
    "rewards/format_reward/std",
    "step_time",
    "num_tokens",
    "epoch",
]


def long_run(runs_dir) -> str:
    """A finished run of STEPS logged steps, as the service's database holds one."""
    store = Store(runs_dir / "runs.sqlite3")
    config = yaml.safe_dump(
        {"model_name_or_path": "m", "dataset_name": "d", "max_steps": STEPS, "output_dir": str(runs_dir / "long")}
    )
    store.insert(
        id="0a1b2c3d4e5f",
        state="succeeded",
        config_text=config,
        config_format="yaml",
        world_size=1,
        output_dir=str(runs_dir / "long"),
        run_dir=str(runs_dir / "0a1b2c3d4e5f"),
        warnings="[]",
        created_at=time.time() - 7200,
        started_at=time.time() - 7100,
        finished_at=time.time() - 60,
        exit_code=0,
    )
    records = [
        {"step": step, **{key: 0.5 + (step % 97) / 1000 + index for index, key in enumerate(KEYS)}}
        for step in range(1, STEPS + 1)
    ]
    store.add_metrics("0a1b2c3d4e5f", records, 0, None)
    store.close()
    return "0a1b2c3d4e5f"


@pytest.mark.browser
@pytest.mark.slow
def test_a_5000_step_run_shows_its_summary_first_and_its_metrics_by_range(page, make_service, tmp_path):
    run_id = long_run(tmp_path / "runs")
    service = make_service()
    with service.client() as client:
        client.get(f"/api/v1/runs/{run_id}?metrics=false")  # the service's first answer warms its imports
        started = time.perf_counter()
        summary = client.get(f"/api/v1/runs/{run_id}?metrics=false")
        took = time.perf_counter() - started
        part = client.get(f"/api/v1/runs/{run_id}?metrics_after=1000&metrics_until=2000").json()
    assert summary.status_code == 200 and took < 1.0, took
    doc = summary.json()
    assert doc["metrics"] == [] and doc["step"] == STEPS and doc["progress"]["fraction"] == 1.0
    assert len(summary.content) < 20_000  # the whole run document is megabytes; its summary is not
    assert [r["step"] for r in part["metrics"]] == list(range(1001, 2001))

    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if f"/runs/{run_id}?" in request.url else None)
    started = time.perf_counter()
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run_id}")
    page.wait_for_selector("#run-state[data-state=succeeded]")
    shown = time.perf_counter() - started
    page.wait_for_selector("#metrics-loading:not([hidden])", state="attached")
    page.wait_for_selector("figure[data-metric=reward]")
    page.wait_for_function("() => document.getElementById('metrics-loading').hidden", timeout=60_000)
    assert shown < 5.0, shown  # the page itself loads too; the summary's own answer is timed above
    ranges = [url.split("?", 1)[1] for url in asked]
    assert ranges[0] == "metrics=false" and "metrics_after=-1&metrics_until=999" in ranges
    assert "metrics_after=4999&metrics_until=5999" in ranges
    drawn = page.get_attribute("figure[data-metric=reward] polyline", "points")
    assert len(drawn.split()) > 100  # the whole run is on the chart


def health_run(runs_dir) -> str:
    """A finished run whose records give a warning on two stretches of steps (every group flat on steps 1-5 and
    11-20) and an error (it resumed at its last step, GRPO-A014), in the files a run writes."""
    output = runs_dir / "flat" / "output"
    output.mkdir(parents=True)
    records = [
        {
            "step": step,
            "loss": 0.0,
            "reward": 0.1,
            "reward_std": 0.0 if step <= 5 or step > 10 else 0.3,
            "frac_reward_zero_std": 1.0 if step <= 5 or step > 10 else 0.2,
            "grad_norm": 0.5,
            "kl": 0.0,
            "learning_rate": 1e-5,
        }
        for step in range(1, 21)
    ]
    (output / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (output / "run_info.json").write_text(
        json.dumps({"resumed_from": {"step": 20, "checkpoint": "checkpoint-20"}, "total_steps": 20})
    )
    store = Store(runs_dir / "runs.sqlite3")
    store.insert(
        id="f1a7f1a7f1a7",
        state="succeeded",
        config_text="max_steps: 20\n",
        config_format="yaml",
        world_size=1,
        output_dir=str(output),
        run_dir=str(runs_dir / "f1a7f1a7f1a7"),
        warnings="[]",
        created_at=time.time() - 600,
        started_at=time.time() - 590,
        finished_at=time.time() - 60,
        exit_code=0,
    )
    store.add_metrics("f1a7f1a7f1a7", records, 0, None)  # as the service ingested them while it ran
    store.close()
    return "f1a7f1a7f1a7"


@pytest.mark.browser
@pytest.mark.slow
def test_health_lists_the_error_first_and_marks_every_stretch_a_finding_held(page, make_service, tmp_path):
    run_id = health_run(tmp_path / "runs")
    service = make_service()
    with service.client() as client:
        report = client.get(f"/api/v1/runs/{run_id}/health").json()
    flat = next(f for f in report["findings"] if f["code"] == "GRPO-A001")
    stretches = (flat.get("extent") or {}).get("stretches") or [flat["steps"]]
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run_id}")
    page.wait_for_selector("#health-list li[data-code='GRPO-A001']", timeout=30_000)
    codes = page.eval_on_selector_all("#health-list li", "(items) => items.map((i) => i.dataset.code)")
    assert codes[0] == "GRPO-A014" and "GRPO-A001" in codes[1:], codes  # the error before the warnings
    item = page.locator("#health-list li[data-code='GRPO-A001']")
    assert item.get_attribute("data-steps") == ",".join(f"{a}-{b}" for a, b in stretches)
    page.wait_for_selector("figure[data-metric='frac_reward_zero_std'] rect.health-mark")
    marks = page.eval_on_selector_all(
        "figure[data-metric='frac_reward_zero_std'] rect.health-mark",
        "(rects) => rects.map((r) => [Number(r.dataset.from), Number(r.dataset.to)])",
    )
    assert marks == [list(s) for s in stretches], marks
