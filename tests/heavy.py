"""The heavy tier: the slowest end-to-end tests (each 15-120 s on 2 cores: real training processes, Slurm and Ray
jobs, Chromium sessions over a live run, smoke tests of whole recipes), which together take most of the suite's hour.

A bare `pytest` (the whole suite from testpaths, as scripts/test.sh and CI run it) runs one third of them, chosen by
the checked-out commit, so every heavy test runs at least every few commits and a rerun of one commit runs the same
ones. Anything narrower (`pytest tests/smoke`, a node id, `-m heavy`) runs all that it names.
`GRPO_TEST_HEAVY=all` runs every heavy test in a bare run, `none` none, a number 0-2 that slice.

Each entry is a node id or the prefix of one (a file's `path::` for all of it); a bare run fails when an entry
matches no test, so a renamed test cannot fall out of the tier unnoticed. Seconds measured on the 2-core machine.
"""

from __future__ import annotations

import os
import subprocess
import zlib
from pathlib import Path

import pytest

SLICES = 3

HEAVY = (
    "tests/smoke/test_determinism.py::test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process[06_",  # 121
    "tests/smoke/test_determinism.py::test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process[18_",  # 58
    "tests/smoke/test_corpus.py::",  # 79
    "tests/smoke/test_code_recipes.py::",  # 58 + 4 x 28
    "tests/smoke/test_service.py::",  # 31 + 18 + 15
    "tests/smoke/test_service_browser.py::",  # 34
    "tests/smoke/test_heldout.py::",  # 23 + 19
    "tests/smoke/test_examples.py::test_the_example_smoke_passes",  # 16 x 15-21
    "tests/smoke/test_faults.py::test_two_declared_processes_run_as_two_cpu_processes",  # 14
    "tests/packaging/test_wheel.py::test_the_wheel_installs_beside_web_py_and_every_command_works",  # 77
    "tests/slurm/test_jobs.py::test_a_time_limit_kill_is_reported_with_slurms_reason",  # 74 (with the cluster's start)
    "tests/slurm/test_jobs.py::test_runs_from_the_service_are_slurm_jobs",  # 70
    "tests/hardware/test_host_ram.py::test_zero3_offload_host_ram_on_two_cpu_processes",  # 68
    "tests/hardware/test_measured.py::",  # 16-43 a case
    "tests/ray/test_ray_jobs.py::test_a_cancelled_ray_job_resumes_from_its_checkpoint",  # 51
    "tests/ray/test_ray_jobs.py::test_the_driver_serves_vllm_from_a_bundle_of_its_own_before_the_machines",  # 20
    "tests/ray/test_ray_service_browser.py::",  # 33
    "tests/runtime/test_hub_push.py::test_an_unreachable_hub_is_reported_and_the_local_run_is_kept",  # 47
    "tests/runtime/test_sharded_launch.py::",  # 15-42 each
    "tests/runtime/test_launch.py::test_two_process_launch_assigns_prompts_by_the_plan_and_resumes_exactly",  # 27
    "tests/runtime/test_continuous_batching.py::",  # 15-26 each
    "tests/runtime/test_field_sweep.py::test_an_honoured_field_changes_the_run[use_transformers_continuous_batching]",  # 36
    "tests/benchmarks/test_benchmark_harness.py::test_quick_",  # 41 + 26
    "tests/runs/test_ownership.py::",  # 57 + 26
    "tests/runs/test_ownership_browser.py::",  # 28
    "tests/runs/test_first_hour_runs_browser.py::",  # 15-39 each
    "tests/runs/test_lifecycle.py::",  # 31
    "tests/runs/test_runs_page_browser.py::",  # 24-27 each
    "tests/runs/test_views_browser.py::",  # 15-27 each
    "tests/runs/test_views.py::",  # 22 each (two runs trained)
    "tests/runs/test_health_browser.py::",  # 16
    "tests/hardening/test_load.py::",  # 15
    "tests/web/test_form_fixes_browser.py::test_a_launch_into_another_runs_output_dir_offers_resume_overwrite_or_a_new_folder",  # 25
)

_SUMMARY = pytest.StashKey[str]()


def is_heavy(nodeid: str) -> bool:
    return nodeid.startswith(HEAVY)


def chosen_slices() -> set[int]:
    """The slices a bare run keeps: this commit's one, or what GRPO_TEST_HEAVY asks for."""
    asked = os.environ.get("GRPO_TEST_HEAVY", "").strip().lower()
    if asked == "all":
        return set(range(SLICES))
    if asked == "none":
        return set()
    if asked.isdigit():
        return {int(asked) % SLICES}
    return {commit_number() % SLICES}


def commit_number() -> int:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                              text=True, timeout=10).stdout.strip()
        return int(head[:8], 16)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0  # not a git checkout: the first slice


def select(config: pytest.Config, items: list[pytest.Item], check_entries: bool) -> None:
    """Mark the heavy tests; in a bare whole-suite run keep only the chosen slices of them."""
    heavy = [item for item in items if is_heavy(item.nodeid)]
    for item in heavy:
        item.add_marker(pytest.mark.heavy)
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS or "heavy" in (config.option.markexpr or ""):
        return
    collected_cleanly = not (items and items[0].session.testsfailed)  # a module that failed to import is said first
    if check_entries and collected_cleanly:
        unmatched = [entry for entry in HEAVY if not any(item.nodeid.startswith(entry) for item in heavy)]
        if unmatched:
            raise pytest.UsageError(f"tests/heavy.py names tests that do not exist (renamed?): {unmatched}")
    keep = chosen_slices()
    left_out = [item for item in heavy if zlib.crc32(item.nodeid.encode()) % SLICES not in keep]
    if left_out:
        dropped = {id(item) for item in left_out}
        items[:] = [item for item in items if id(item) not in dropped]
        config.hook.pytest_deselected(items=left_out)
    config.stash[_SUMMARY] = (f"heavy tests: {len(heavy) - len(left_out)} of {len(heavy)} run (slices "
                              f"{sorted(keep)} of {SLICES}; by default one, chosen by the commit; "
                              "GRPO_TEST_HEAVY=all runs every one, tests/heavy.py lists them)")


def summary(config: pytest.Config) -> str | None:
    return config.stash.get(_SUMMARY, None)
