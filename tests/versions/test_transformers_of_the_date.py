"""Each release table is read with the transformers of the release's date (the newest uploaded before the TRL wheel):
a TrainingArguments key that transformers still reads is read by the release, and GRPO-K011 warns about the later
transformers of the range the release accepts that refuse it."""

from __future__ import annotations

import json

from grpo_schema.engine.check import check_mapping
from grpo_schema.versions import surface
from grpo_schema.versions.tables import RELEASES_DIR

BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B",
    "dataset_name": "trl-lib/tldr",
    "output_dir": "out",
    "reward_funcs": ["accuracy_reward"],
}


def found(release: str, **keys) -> dict[str, tuple[str, str]]:
    result = check_mapping({**BASE, **keys}, trl_version=release)
    return {f: (d.code, d.severity) for d in result.diagnostics for f in d.fields if f in keys}


def test_each_release_is_paired_with_the_transformers_of_its_date():
    index = {e["release"]: e for e in json.loads((RELEASES_DIR / "index.json").read_text())["releases"]}
    assert index["1.0.0"]["transformers"] == "5.4.0" and index["1.8.0"]["transformers"] == "5.13.0"
    assert index["0.29.1"]["transformers"] == "5.3.0" and index["1.12.0"]["transformers"] == "5.16.1"
    assert index["1.16.0"]["transformers"] == "5.23.0"  # the project's own pin (PROJECT_PINS), not the date's 5.19
    for entry in index.values():  # the transformers wheel is never newer than the TRL wheel, but for 1.16's pin
        assert entry["dates"]["transformers"] <= entry["dates"]["trl"] or entry["release"] == "1.16.0"
    assert "warmup_ratio" in surface("1.0").fields and "warmup_ratio" not in surface("1.10").fields


def test_a_key_the_dates_transformers_reads_is_read_and_warned_about_for_the_rest_of_the_range():
    """TRL 1.0.0 with transformers 5.4 reads warmup_ratio (5.15 removed it): a warning naming the range, never the
    release's 'not read' error, whose parser would stop on the key only with transformers 5.15 or later."""
    assert found("1.0", warmup_ratio=0.1) == {"warmup_ratio": ("GRPO-K011", "warning")}
    result = check_mapping({**BASE, "warmup_ratio": 0.1}, trl_version="1.0")
    (k011,) = [d for d in result.diagnostics if d.code == "GRPO-K011"]
    assert "refused from 5.15 on" in k011.message and "5.4.0" in k011.message
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    # read by the parser of that transformers: a string it cannot convert stops it
    refused = check_mapping({**BASE, "warmup_ratio": "a lot"}, trl_version="1.0")
    assert [(d.code, d.fields) for d in refused.diagnostics if d.severity == "error"] == [
        ("GRPO-T013", ("warmup_ratio",))
    ]


def test_a_key_the_dates_transformers_no_longer_reads_still_names_the_older_ones():
    assert found("1.10", warmup_ratio=0.1) == {"warmup_ratio": ("GRPO-K011", "warning")}  # table 5.15.0


def test_the_range_stays_within_the_tables_major():
    """TRL 0.23 (transformers 4.56.2) accepts transformers>=4.56.1 with no ceiling, but never met transformers 5: its
    warmup_ratio and overwrite_output_dir are simply read."""
    assert found("0.23", warmup_ratio=0.1, overwrite_output_dir=True) == {}


def _releases_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "trl_tables" / "releases.py"
    spec = importlib.util.spec_from_file_location("_trl_tables_releases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(*uploads: str, kind: str = "bdist_wheel", yanked: bool = False) -> list[dict]:
    return [{"upload_time_iso_8601": t, "packagetype": kind, "yanked": yanked} for t in uploads]


def test_the_date_rule_takes_the_newest_version_uploaded_before_the_trl_wheel():
    """By version, not by text or by upload order (a 4.57 patch uploaded after 5.0 is older), never a pre-release
    or a yanked release, and only what was uploaded before the TRL wheel (its sdist's time does not count)."""
    script = _releases_module()
    trl = {"releases": {r: _files("2026-03-30T00:00:00Z") for r in script.RELEASES}}
    trl["releases"]["1.0.0"] = _files("2026-03-29T00:00:00Z", kind="sdist") + _files("2026-03-30T00:00:00Z")
    transformers = {
        "releases": {
            "5.9.0": _files("2026-03-01T00:00:00Z"),
            "5.10.0": _files("2026-03-02T00:00:00Z"),
            "4.57.9": _files("2026-03-20T00:00:00Z"),
            "5.11.0rc1": _files("2026-03-25T00:00:00Z"),
            "5.11.0": _files("2026-03-26T00:00:00Z", yanked=True),
            "5.12.0": _files("2026-03-31T00:00:00Z"),
        }
    }
    assert script.date_pairs(trl, transformers)["1.0.0"] == "5.10.0"
