"""The choices the Launch dialog offers when the output_dir is another run's (GRPO-X007): the service's answer
says how the form's config differs from that run's, key by key, because "Resume that run" trains on from that run's
checkpoint with the form's settings. The owner is a real record in the service's database (a finished run)."""

from __future__ import annotations

import time

import pytest
import yaml

from grpo_web.runs.store import Store
from tests.runs.conftest import run_yaml

pytestmark = pytest.mark.slow  # a service process


def test_x007_says_how_this_config_differs_from_the_run_it_would_resume(make_service, tmp_path, assets):
    output = tmp_path / "runs" / "shared-output"  # output_dir: shared-output, under the runs directory
    theirs = yaml.safe_load(run_yaml(assets, learning_rate=1e-6, max_steps=50, output_dir="shared-output"))
    store = Store(tmp_path / "runs" / "runs.sqlite3")
    store.insert(
        id="00aa11bb22cc",
        state="cancelled",
        config_text=yaml.safe_dump(theirs),
        config_format="yaml",
        world_size=1,
        output_dir=str(output),
        run_dir=str(tmp_path / "runs" / "00aa11bb22cc"),
        warnings="[]",
        created_at=time.time() - 600,
        finished_at=time.time() - 60,
    )
    store.close()
    service = make_service()
    mine = {**theirs, "learning_rate": 1e-5, "max_steps": 60, "beta": 0.04}
    mine.pop("num_generations")
    with service.client() as client:
        answer = client.post("/api/v1/runs", content=yaml.safe_dump(mine), headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 422 and "output_owner" in answer.json(), answer.text
    owner = answer.json()["output_owner"]
    assert owner["id"] == "00aa11bb22cc"
    assert owner["differences"] == [
        {"key": "beta", "this": 0.04, "that": 0.0},
        {"key": "learning_rate", "this": 1e-5, "that": 1e-6},
        {"key": "max_steps", "this": 60, "that": 50},
        {"key": "num_generations", "this": None, "that": 4},
    ]
