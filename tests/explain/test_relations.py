"""The batch relations explain shows (the form's schedule, `grpo explain`): the derivation with its numbers, each
relation marked by the same checks the batch rules make, and a failed one named by the code the check reports."""

from __future__ import annotations

import itertools

from grpo_schema import check_mapping
from grpo_schema.commands.explain import explain_result
from grpo_schema.engine.batch_geometry import Geometry, problems
from grpo_schema.engine.batch_relations import relations
from grpo_schema.render.explain_text import render_explain


def geometries():
    for b, G, GA, gbs, s, eval_on in itertools.product(
        (1, 3, 4), (2, 3, 8), (1, 2), (None, 6, 16), (None, 4), (False, True)
    ):
        yield Geometry(b, G, GA, 1, gbs, s, eval_on, per_device_eval_batch_size=3)


def test_a_relation_fails_exactly_where_trl_refuses():
    for geo, P in itertools.product(geometries(), (1, 2, 3)):
        failed = {r.problem for r in relations(geo, P) if not r.holds}
        assert failed == {p.kind for p in problems(geo, P)}, (geo, P)


def test_the_derivation_carries_the_numbers():
    listed = relations(Geometry(3, 8, 1, 1, None, None), 1)
    assert [(r.name, r.holds) for r in listed] == [("generation_batch_size", True), ("prompts_per_generation", False)]
    assert listed[0].formula == "per_device_train_batch_size x world_size x steps_per_generation = 3 x 1 x 1 = 3"
    assert listed[1].formula == "generation_batch_size % num_generations = 3 % 8 = 3"
    (uneven,) = relations(Geometry(4, 2, 1, 1, 10, None), 1)
    assert (
        uneven.formula
        == (
            "generation_batch_size / (per_device_train_batch_size x world_size) = 10 / (4 x 1) = "
            "2.5, not whole (remainder 2)"
        )
        and not uneven.holds
    )


def test_a_failed_relation_names_the_diagnostic_that_reports_it():
    cases = {
        "GRPO-B001": {"per_device_train_batch_size": 3, "num_generations": 8},
        "GRPO-B002": {"generation_batch_size": 16, "steps_per_generation": 2},
        "GRPO-B003": {"per_device_train_batch_size": 4, "num_generations": 2, "generation_batch_size": 10},
        "GRPO-B004": {
            "per_device_train_batch_size": 8,
            "num_generations": 8,
            "eval_strategy": "steps",
            "per_device_eval_batch_size": 3,
        },
    }
    for code, values in cases.items():
        result = check_mapping(values)
        document = explain_result(result)
        failed = [r["code"] for r in document["relations"] if not r["holds"]]
        assert failed == [code], (code, document["relations"])
        assert code in {d.code for d in result.diagnostics}, code


def test_explain_text_shows_the_relation_that_fails_and_json_the_why():
    document = explain_result(check_mapping({"per_device_train_batch_size": 3, "num_generations": 8}))
    assert document["schedule"] == [] and "why" not in document
    text = render_explain(document)
    assert "FAILS [GRPO-B001]  generation_batch_size % num_generations = 3 % 8 = 3" in text
    assert "holds              per_device_train_batch_size x world_size x steps_per_generation = 3 x 1 x 1 = 3" in text
    valid = explain_result(
        check_mapping(
            {"per_device_train_batch_size": 4, "num_generations": 8, "steps_per_generation": 4, "num_iterations": 2}
        )
    )
    assert valid["why"]["title"] == "Why steps_per_generation appears twice in the sampler"
    assert all(line in render_explain(valid) for line in valid["why"]["lines"])
    assert "FAILS" not in render_explain(valid)
