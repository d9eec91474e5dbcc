"""Each release's own batch meaning: what per_device_train_batch_size counts and which divisibility checks its
trainer or config makes (trainer.json's `batch`, read from each release's source), and validate / explain / plan
judging a file by them."""

from __future__ import annotations

import json

import pytest

from grpo_schema.cli import main
from grpo_schema.engine.check import check_mapping
from grpo_schema.versions import surface

RECIPE = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B",
    "dataset_name": "trl-lib/tldr",
    "per_device_train_batch_size": 2,
    "num_generations": 8,
    "gradient_accumulation_steps": 4,
}


def batch_codes(release: str, world_size: int = 1, **changes) -> list[str]:
    result = check_mapping({**RECIPE, **changes}, trl_version=release, world_size=world_size)
    return sorted(d.code for d in result.diagnostics if d.code in ("GRPO-B001", "GRPO-B003", "GRPO-B004"))


def test_the_tables_hold_each_release_s_unit_and_checks():
    def checks(release):
        return [(c.product, c.where, c.eval) for c in surface(release).batch.checks]

    assert surface("0.14").batch.unit == "prompts" and checks("0.14") == []
    train_016 = (("per_device_train_batch_size", "world_size"), "trainer", False)
    eval_early = (("per_device_eval_batch_size", "world_size"), "trainer", True)
    assert checks("0.15") == checks("0.16") == [train_016, eval_early]
    assert checks("0.17")[0] == (
        ("per_device_train_batch_size", "world_size", "gradient_accumulation_steps"),
        "trainer",
        False,
    )
    assert checks("0.19") == [
        (("generation_batch_size",), "config", False),
        (("per_device_eval_batch_size", "world_size"), "config", True),
    ]
    assert [c[2] for c in checks("0.20")] == [False]  # 0.20-0.21 dropped the evaluation batch's check
    assert all(surface(r).batch.unit == "completions" for r in ("0.15", "0.17", "0.19", "1.0", "1.16"))


def test_014_counts_prompts_and_checks_nothing():
    assert batch_codes("0.14") == []
    assert batch_codes("0.14", world_size=3, per_device_train_batch_size=1, num_generations=7) == []
    assert batch_codes("0.14", eval_strategy="steps", per_device_eval_batch_size=3) == []


def test_015_016_check_the_global_micro_batch():
    assert batch_codes("0.16") == ["GRPO-B001"]  # 2 x 1 is not a multiple of 8, whatever the accumulation
    assert batch_codes("0.15", world_size=4) == []  # 2 x 4 = 8
    message = next(d.message for d in check_mapping(RECIPE, trl_version="0.16").diagnostics if d.code == "GRPO-B001")
    assert "TRL 0.16.1's trainer" in message and "gradient_accumulation_steps" not in message


def test_017_checks_per_device_processes_and_accumulation():
    assert batch_codes("0.17") == []  # 2 x 1 x 4 = 8
    assert batch_codes("0.17", gradient_accumulation_steps=3) == ["GRPO-B001"]
    plan = check_mapping(RECIPE, trl_version="0.17").plan
    assert plan.steps_per_generation == 4 and plan.generation_batch_size == 8  # one generation per 4 micro-steps


def test_the_evaluation_batch_is_checked_only_where_the_release_checks_it():
    evaluation = {
        "eval_strategy": "steps",
        "per_device_eval_batch_size": 3,
        "num_generations": 2,
        "per_device_train_batch_size": 4,
    }
    assert batch_codes("0.19", **evaluation) == ["GRPO-B004"]
    assert batch_codes("0.20", **evaluation) == batch_codes("0.21", **evaluation) == []
    assert batch_codes("0.22", **evaluation) == ["GRPO-B004"]


def test_014_plan_is_in_prompts_per_device(capsys):
    result = check_mapping(RECIPE, trl_version="0.14", world_size=2)
    plan = result.plan
    assert plan.per_device_unit == "prompts" and plan.completions_per_micro_batch == 16
    assert plan.prompts_per_generation == 4 and plan.generation_batch_size == 32
    assert plan.generate_every_micro_steps == 1 and plan.completions_per_optimizer_step == 2 * 8 * 2 * 4


def test_explain_shows_014_s_schedule_as_prompts_per_device(tmp_path, capsys):
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in RECIPE.items()))
    main(["explain", str(path), "--trl-version", "0.14", "--world-size", "2", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["derived"]["per_device_unit"] == "prompts"
    assert document["derived"]["formulas"]["prompts_per_generation"].endswith("= 4 prompts")
    assert [r["holds"] for r in document["relations"]] == [True]
    assert document["valid_world_sizes"][:3] == [1, 2, 3]
    main(["explain", str(path), "--trl-version", "0.14", "--world-size", "2"])
    text = capsys.readouterr().out
    assert "prompts" in text and "per_device_train_batch_size (prompts)" in text


@pytest.mark.parametrize("release, valid", [("0.14", True), ("0.16", False), ("0.17", True)])
def test_validate_uses_the_release_s_meaning(tmp_path, capsys, release, valid):
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in RECIPE.items()))
    main(["validate", str(path), "--trl-version", release, "--format", "json"])
    out = capsys.readouterr().out
    assert ("GRPO-B001" in out) is not valid, out


@pytest.mark.parametrize("to", ["0.15", "1.16"])
def test_migrating_014_writes_the_batch_in_completions(tmp_path, capsys, to):
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in RECIPE.items()))
    main(["migrate", str(path), "--from", "0.14", "--to", to])
    out = capsys.readouterr().out
    assert "+per_device_train_batch_size: 16" in out


def test_migrating_017_keeps_one_generation_per_accumulation(tmp_path, capsys):
    """0.17 generated per_device x processes x gradient_accumulation_steps at once: 1.16's default, not
    steps_per_generation 1 (0.15-0.16's one generation per micro-step)."""
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in RECIPE.items()))
    main(["migrate", str(path), "--from", "0.17", "--to", "1.16"])
    assert "steps_per_generation" not in capsys.readouterr().out
    main(["migrate", str(path), "--from", "0.16", "--to", "1.16"])
    assert "+steps_per_generation: 1" in capsys.readouterr().out


def test_explain_sizes_prompts_by_the_release_s_truncation(tmp_path, capsys):
    """0.14-0.27 truncate prompts to max_prompt_length (512 by default); 1.16 keeps them whole."""
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in RECIPE.items()))

    def lengths(release):
        main(["explain", str(path), "--trl-version", release, "--format", "json"])
        derived = json.loads(capsys.readouterr().out)["derived"]
        return derived["context_length_needed"], derived["inputs"].get("max_prompt_length", {}).get("source", "")

    assert lengths("0.19") == (512 + 256, "TRL 0.19.1's default max_prompt_length (it truncates prompts to it)")
    assert lengths("1.16")[0] is None
    path.write_text(path.read_text() + "max_prompt_length: 10000\n")
    assert lengths("0.19")[0] == 10000 + 256
    assert "no longer read by TRL 1.16" in lengths("1.16")[1]


def test_016_reuses_an_optimizer_step_s_completions_for_num_iterations_steps(tmp_path, capsys):
    """0.16 generates per micro-step, keeps an optimizer step's gradient_accumulation_steps micro-batches and trains
    on them again for num_iterations - 1 optimizer steps: old log-probs are computed and clipping acts."""
    settings = dict(per_device_train_batch_size=4, num_generations=4, gradient_accumulation_steps=2, num_iterations=2)
    plan = check_mapping({**RECIPE, **settings}, trl_version="0.16").plan
    assert (plan.generate_every_micro_steps, plan.steps_per_generation) == (4, 2)
    assert plan.old_logprobs_needed and plan.clipping_active
    single = check_mapping({**RECIPE, **settings, "num_iterations": 1}, trl_version="0.16").plan
    assert (single.steps_per_generation, single.generation_batch_size) == (1, 4)  # a generation per micro-step
    path = tmp_path / "r.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in {**RECIPE, **settings}.items()))
    main(["explain", str(path), "--trl-version", "0.16", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert document["notes"][0].startswith("TRL 0.16.1 has no steps_per_generation")
    assert [s["generates"] for s in document["schedule"][:4]] == [True, False, False, False]
