"""The run plan and the micro-step walk, against the worked examples of grpo-runtime.md and TRL's tracker."""

from __future__ import annotations

import json

from grpo_schema import check_mapping
from grpo_schema.engine.plan import derive_plan
from grpo_schema.engine.schedule import walk

# grpo-runtime.md §2.5, verified with a 2-process run: P=2, b=4, G=4, s=2, mu=2, GA=2, 16 prompts, seed 0.
WORKED = {
    "per_device_train_batch_size": 4,
    "num_generations": 4,
    "steps_per_generation": 2,
    "num_iterations": 2,
    "gradient_accumulation_steps": 2,
    "seed": 0,
}
SEED0_PERMUTATION = [12, 10, 9, 6, 11, 8, 13, 5, 2, 14, 15, 0, 4, 3, 7, 1]  # torch.randperm(16), seed 0
INTERFACE_KEYS = {
    "world_size",
    "generation_batch_size",
    "steps_per_generation",
    "prompts_per_generation",
    "completions_per_optimizer_step",
    "optimizer_steps_per_generation",
    "generate_every_micro_steps",
    "old_logprobs_needed",
}


def plan_of(values: dict, world_size: int = 1, **options):
    result = check_mapping(values, world_size=world_size)
    return derive_plan(result.config, world_size, sources=result.sources, **options)


def test_worked_example_numbers():
    plan = plan_of(WORKED, world_size=2, dataset_size=16)
    assert (plan.generation_batch_size, plan.prompts_per_generation, plan.sampler_batch_size) == (16, 4, 8)
    assert plan.generate_every_micro_steps == plan.sampler_repeat_count == 4
    assert plan.optimizer_steps_per_generation == 2
    assert plan.old_logprobs_needed and plan.clipping_active  # 2 % 4 != 0: the weights move inside a generation
    assert (plan.generations_per_epoch, plan.micro_steps_per_epoch, plan.optimizer_steps_per_epoch) == (4, 16, 8)


def rows(process) -> list[int]:
    return [p.index for p in process.prompts for _ in range(p.copies)]


def test_worked_example_walk_matches_the_verified_trace():
    plan = plan_of(WORKED, world_size=2, dataset_size=16)
    steps = walk(plan, micro_steps=9, order=lambda epoch: SEED0_PERMUTATION)
    assert [s.generates for s in steps] == [True, False, False, False, True, False, False, False, True]
    assert [rows(p) for p in steps[0].processes] == [[12] * 4 + [10] * 4, [9] * 4 + [6] * 4]
    assert [rows(p) for p in steps[4].processes] == [[11] * 4 + [8] * 4, [13] * 4 + [5] * 4]
    assert [rows(p) for p in steps[8].processes] == [[2] * 4 + [14] * 4, [15] * 4 + [0] * 4]
    assert [s.copy_of for s in steps[:5]] == [None, 0, 0, 0, None]  # ignored copies of micro-step 0's batches
    assert [s.optimizer_step for s in steps] == [None, 1, None, 2, None, 3, None, 4, None]
    assert [(s.iteration, s.buffer_slice) for s in steps[:4]] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert [p.sampler_batch for p in steps[1].processes] == [2, 3]  # batch k goes to rank k mod P
    assert [p.used for p in steps[1].processes] == [False, False]


def test_trl_issue_3204_total_steps():
    # 8000 prompts, per-device 4, 3 processes, GA 2, G 6: 2000 optimizer steps per epoch, 4000 for 2 epochs.
    values = {
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 2,
        "num_generations": 6,
        "num_train_epochs": 2,
    }
    plan = plan_of(values, world_size=3, dataset_size=8000)
    assert (plan.optimizer_steps_per_epoch, plan.total_optimizer_steps, plan.epochs) == (2000, 4000, 2.0)
    assert plan_of({**values, "num_iterations": 4}, 3, dataset_size=8000).optimizer_steps_per_epoch == 8000


def test_short_last_window_counts_as_a_step_and_epochs_restart_windows():
    values = {
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "gradient_accumulation_steps": 2,
        "steps_per_generation": 1,
        "num_train_epochs": 2,
    }
    plan = plan_of(values, dataset_size=7)  # U = 2: 3 generations (1 prompt left out), 3 micro-steps per epoch
    assert (plan.micro_steps_per_epoch, plan.optimizer_steps_per_epoch, plan.prompts_dropped_per_epoch) == (3, 2, 1)
    steps = walk(plan, micro_steps=10)
    assert [(s.epoch, s.optimizer_step, s.window) for s in steps] == [
        (0, None, 2),
        (0, 1, 2),
        (0, 2, 1),
        (1, None, 2),
        (1, 3, 2),
        (1, 4, 1),
    ]  # stops after the last step


def test_dataset_smaller_than_one_generation_has_no_schedule():
    plan = plan_of({"per_device_train_batch_size": 8, "num_generations": 2}, dataset_size=3)
    assert plan.generations_per_epoch == 0 and walk(plan) == []


def test_context_length_needs_a_declared_prompt_length():
    plan = plan_of({"max_completion_length": 1024})
    assert plan.context_length_needed is None and "unknown" in plan.context_length_note
    plan = plan_of({"max_completion_length": 1024}, max_prompt_length=512)
    assert plan.context_length_needed == 1536 and plan.inputs["max_prompt_length"]["value"] == 512


def test_clipping_is_dead_on_policy_even_with_vllm_correction():
    on_policy = {
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "gradient_accumulation_steps": 4,
        "use_vllm": True,
    }
    plan = plan_of(on_policy)
    assert plan.old_logprobs_needed and not plan.clipping_active
    assert plan_of({**on_policy, "num_iterations": 2}).clipping_active
    assert not plan_of({**on_policy, "use_vllm": False}).old_logprobs_needed


def test_group_split_flags_and_completions_per_prompt_per_step():
    plan = plan_of(
        {
            "per_device_train_batch_size": 3,
            "num_generations": 4,
            "gradient_accumulation_steps": 2,
            "steps_per_generation": 4,
        },
        world_size=2,
    )
    assert not plan.groups_split_across_processes  # 3 x 4 = 12 rows per process hold 3 whole groups of 4
    plan = plan_of({"per_device_train_batch_size": 3, "num_generations": 4, "steps_per_generation": 2}, world_size=2)
    assert plan.groups_split_across_processes  # 6 rows per process, groups of 4 straddle
    plan = plan_of(
        {
            "per_device_train_batch_size": 4,
            "num_generations": 8,
            "gradient_accumulation_steps": 2,
            "steps_per_generation": 4,
        }
    )
    assert plan.groups_split_across_optimizer_steps and plan.completions_per_prompt_per_optimizer_step == 4


def test_sources_say_where_each_input_came_from():
    result = check_mapping(
        {"num_generations": 4, "per_device_train_batch_size": 4, "num_processes": 2},
        overrides=["gradient_accumulation_steps=3"],
    )
    inputs = result.plan.inputs
    assert inputs["num_generations"]["source"] == "file"
    assert inputs["gradient_accumulation_steps"]["source"] == "command line"
    assert inputs["num_iterations"]["source"] == "default"
    assert inputs["steps_per_generation"] == {"value": 3, "source": "derived"}
    assert inputs["world_size"] == {"value": 2, "source": "file"}
    assert check_mapping({}, world_size=4).plan.inputs["world_size"]["source"] == "command line"


def test_derived_stays_backwards_compatible_and_serialisable():
    derived = check_mapping({"num_generations": 4, "per_device_train_batch_size": 4}).derived
    assert INTERFACE_KEYS <= set(derived)
    assert json.loads(json.dumps(derived)) == derived
    assert derived["formulas"]["generation_batch_size"].endswith("= 4")
