"""`grpo plan` against the 16 GRPO runs whose outcome on stated hardware is public (tests/support/public_runs.py,
with the sources): the verdict fits or not as the run did, and the step time near the reported one."""

import pytest

from grpo_schema.commands.plan import check_for_hardware
from tests.support.public_runs import RUNS


def plan(config, hardware, prompt):
    result, report = check_for_hardware(
        config, "run.yaml", hardware, prompt_length=prompt, batch_fixes=False, local_files=False
    )
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    return report


@pytest.mark.parametrize("name, config, hardware, prompt, outcome", RUNS, ids=[r[0] for r in RUNS])
def test_public_run_verdict(name, config, hardware, prompt, outcome):
    report = plan(config, hardware, prompt)
    assert report.fits is (outcome == "fits"), (
        name,
        round(report.memory.total / 2**30, 1),
        [(p.name, round(p.bytes / 2**30, 1)) for p in report.memory.at_peak()],
    )


# Reported seconds per optimizer step: the estimate within a factor 1.6 either way.
TIMED = [(RUNS[5], (45, 60)), (RUNS[6], (119, 119))]


@pytest.mark.parametrize("case, reported", TIMED, ids=[c[0][0] for c in TIMED])
def test_public_run_step_time(case, reported):
    name, config, hardware, prompt, _ = case
    seconds = plan(config, hardware, prompt).time.step_seconds
    assert reported[0] / 1.6 <= seconds <= reported[1] * 1.6, (name, seconds)
