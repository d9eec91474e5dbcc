"""docs/health.md documents every run-health code with its declared title, a chart and its rule, and every
threshold with the code's default."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import grpo_schema.health.rundir  # noqa: F401  (declares the run-health codes)
from grpo_schema.engine.codes import CODES
from grpo_schema.health import HealthSettings

DOC = (Path(__file__).resolve().parents[2] / "docs" / "health.md").read_text(encoding="utf-8")


def sections() -> dict[str, tuple[str, str]]:
    found = {}
    parts = re.split(r"^### (GRPO-A\d{3}): (.+)$", DOC, flags=re.M)
    for code, title, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        found[code] = (title.strip(), body)
    return found


def test_every_run_health_code_has_its_section_with_its_title_a_chart_and_a_rule():
    documented = sections()
    declared = {code for code in CODES if code.startswith("GRPO-A")}
    assert set(documented) == declared
    for code, (title, body) in documented.items():
        assert title == CODES[code].title, code
        assert "Rule:" in body, code
        if code != "GRPO-A091":
            assert "```" in body, f"{code} has no example chart"


def test_every_threshold_is_documented_with_its_default():
    rows = dict(re.findall(r"^\| `(\w+)` \| ([0-9.]+) \|", DOC, flags=re.M))
    settings = HealthSettings()
    assert set(rows) == {f.name for f in fields(settings)}
    for name, text in rows.items():
        assert float(text) == getattr(settings, name), name
