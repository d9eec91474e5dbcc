"""The schedule's formulas say what the form shows: with num_iterations 2 the generation feeds every pass, and a
formula names only config fields and the numbers the panel labels, never a derived value by its internal key."""

from __future__ import annotations

import re

from grpo_schema import check_text

CONFIG = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/tldr\nreward_funcs: [accuracy_reward]\n"
    "per_device_train_batch_size: 8\nnum_generations: 8\ngradient_accumulation_steps: 2\nnum_iterations: 2\n"
)
INTERNAL = ("generate_every_micro_steps", "completions_per_process_per_generation", "buffer")


def test_formulas_with_two_passes_are_consistent_and_name_no_internal_value():
    from grpo_schema.engine.plan import derive_plan

    result = check_text(CONFIG, suggest_fixes=False)
    formulas = derive_plan(result.config, 1, dataset_size=64).to_dict()["formulas"]
    for name, text in formulas.items():
        assert not any(word in text for word in INTERNAL), (name, text)
    # one generation of 16 completions, 2 slices of 8, trained on in each of 2 passes: 4 micro-steps, 2 updates
    assert formulas["completions_per_process_per_generation"].endswith("one per micro-step of each of the 2 passes")
    assert re.search(r"= 2 x 2 / 2$", formulas["optimizer_steps_per_generation"])
    assert "x 2 x 2 = " in formulas["micro_steps_per_epoch"]
