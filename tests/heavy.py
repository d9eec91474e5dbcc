"""The heavy tier: the slowest end-to-end tests (each 15-150 s on 2 cores: real training processes, Slurm and Ray
jobs, Chromium sessions over a live run, smoke tests of whole recipes), which together take most of the suite's hour.

Every run of the suite runs all of them. They carry the `heavy` marker, so the fast tier (`scripts/test.sh --fast`)
and a quick local run (`-m "not heavy"`) leave them out. In a parallel run (scripts/test.sh: two pytest-xdist workers,
each file on one worker) the files that hold them are handed out first, longest first, so neither worker is left
with a long file at the end while the other idles.

Each entry is a node id or the prefix of one (a file's `path::` for all of it), with its seconds measured on the
2-core machine; a whole-suite run fails when an entry matches no test, so a renamed test cannot fall out of the tier
unnoticed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HEAVY_TESTS = (  # (node id or prefix, seconds each test it names takes): measured
    ("tests/smoke/test_determinism.py::test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process[06_", 121),
    ("tests/smoke/test_determinism.py::test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process[18_", 58),
    ("tests/smoke/test_corpus.py::", 79),
    ("tests/smoke/test_code_recipes.py::", 28),  # 58 + 4 x 28
    ("tests/smoke/test_service.py::", 21),  # 31 + 18 + 15
    ("tests/smoke/test_service_browser.py::", 34),
    ("tests/smoke/test_heldout.py::", 21),  # 23 + 19
    ("tests/smoke/test_examples.py::test_the_example_smoke_passes", 18),  # 16 x 15-21
    ("tests/smoke/test_faults.py::test_two_declared_processes_run_as_two_cpu_processes", 14),
    ("tests/packaging/test_wheel.py::test_the_wheel_installs_beside_web_py_and_every_command_works", 77),
    (
        "tests/slurm/test_jobs.py::test_a_time_limit_kill_is_reported_with_slurms_reason",
        74,
    ),  # 74 (with the cluster's start)
    ("tests/slurm/test_jobs.py::test_runs_from_the_service_are_slurm_jobs", 70),
    ("tests/hardware/test_host_ram.py::test_zero3_offload_host_ram_on_two_cpu_processes", 68),
    ("tests/hardware/test_measured.py::", 30),  # 16-43 a case
    ("tests/ray/test_ray_jobs.py::test_a_cancelled_ray_job_resumes_from_its_checkpoint", 51),
    ("tests/ray/test_ray_jobs.py::test_the_driver_serves_vllm_from_a_bundle_of_its_own_before_the_machines", 20),
    ("tests/ray/test_ray_service_browser.py::", 33),
    ("tests/runtime/test_hub_push.py::test_an_unreachable_hub_is_reported_and_the_local_run_is_kept", 47),
    ("tests/runtime/test_sharded_launch.py::", 28),  # 15-42 each
    ("tests/runtime/test_launch.py::test_two_process_launch_assigns_prompts_by_the_plan_and_resumes_exactly", 27),
    ("tests/runtime/test_continuous_batching.py::", 20),  # 15-26 each
    (
        "tests/runtime/test_field_sweep.py::test_an_honoured_field_changes_the_run[use_transformers_continuous_batching]",
        36,
    ),
    ("tests/benchmarks/test_benchmark_harness.py::test_quick_", 34),  # 41 + 26
    ("tests/runs/test_ownership.py::", 42),  # 57 + 26
    ("tests/runs/test_ownership_browser.py::", 28),
    ("tests/runs/test_first_hour_runs_browser.py::", 27),  # 15-39 each
    ("tests/runs/test_lifecycle.py::", 31),
    ("tests/runs/test_one_cluster_backend.py::", 43),  # beside the Slurm and Ray tests
    ("tests/runs/test_runs_page_browser.py::", 26),  # 24-27 each
    ("tests/runs/test_views_browser.py::", 21),  # 15-27 each
    ("tests/runs/test_views.py::", 22),  # 22 each (two runs trained)
    ("tests/runs/test_health_browser.py::", 16),
    ("tests/hardening/test_load.py::", 15),
    (
        "tests/web/test_form_fixes_browser.py::test_a_launch_into_another_runs_output_dir_offers_resume_overwrite_or_a_new_folder",
        25,
    ),
)
HEAVY = tuple(entry for entry, _ in HEAVY_TESTS)
SECONDS = dict(HEAVY_TESTS)


def is_heavy(nodeid: str) -> bool:
    return nodeid.startswith(HEAVY)


def mark(config: pytest.Config, items: list[pytest.Item], check_entries: bool) -> None:
    """Mark the heavy tests; in a whole-suite run, check that every entry still names a test."""
    heavy = [item for item in items if is_heavy(item.nodeid)]
    for item in heavy:
        item.add_marker(pytest.mark.heavy)
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr
    collected_cleanly = not (items and items[0].session.testsfailed)  # a module that failed to import is said first
    if whole_suite and check_entries and collected_cleanly:
        ignored = [Path(path).resolve() for path in config.getoption("ignore") or ()]  # scripts/test.sh: tests/ray
        unmatched = [
            entry
            for entry in HEAVY
            if not any(item.nodeid.startswith(entry) for item in heavy) and not under(config.rootpath, entry, ignored)
        ]
        if unmatched:
            raise pytest.UsageError(f"tests/heavy.py names tests that do not exist (renamed?): {unmatched}")


def under(root: Path, entry: str, folders: list[Path]) -> bool:
    """Whether the entry's file is in one of `folders` (left out of this run with --ignore)."""
    path = (root / entry.split("::", 1)[0]).resolve()
    return any(path == folder or folder in path.parents for folder in folders)


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def heavy_seconds_by_file(items: list[pytest.Item]) -> dict[str, float]:
    """The measured seconds of each file's heavy tests (a prefix entry counts once per test it names)."""
    seconds: dict[str, float] = {}
    for item in items:
        weight = next((SECONDS[entry] for entry in HEAVY if item.nodeid.startswith(entry)), 0.0)
        seconds[file_of(item)] = seconds.get(file_of(item), 0.0) + weight
    return seconds


def longest_files_first(items: list[pytest.Item]) -> None:
    """Reorder in place: the files with heavy tests first, the longest first; the rest keep their order."""
    seconds = heavy_seconds_by_file(items)
    order = {name: index for index, name in enumerate(dict.fromkeys(file_of(item) for item in items))}
    items.sort(key=lambda item: (-seconds[file_of(item)], order[file_of(item)]))
