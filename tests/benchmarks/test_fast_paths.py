"""Speed-ups made for the benchmarks keep their outputs: RunPlan.to_dict() equals dataclasses.asdict() (which it
replaced) on every corpus file that has a plan, and returns fresh dicts."""

import dataclasses

from grpo_schema import check_file
from tests.conftest import corpus_files


def test_plan_to_dict_equals_asdict():
    plans = [check_file(path).plan for path in corpus_files("valid") + corpus_files("invalid")]
    plans = [plan for plan in plans if plan is not None]
    assert len(plans) > 50
    for plan in plans:
        fast = plan.to_dict()
        assert fast == dataclasses.asdict(plan)
        assert fast["inputs"] is not plan.inputs and fast["formulas"] is not plan.formulas
