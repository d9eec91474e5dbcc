"""TRL 1.16 as the oracle: the plan's batch geometry, the batch rules' verdicts and the explain walk's prompt order.

TRL reads the world size from the launcher; here `transformers.TrainingArguments.world_size` is patched with a
property returning the declared size (checked below), and `GRPOConfig` is built with use_cpu=True, bf16=False,
report_to='none'. For the prompt order, TRL's RepeatSampler and accelerate's BatchSamplerShard are built exactly as
the trainer builds them, one per rank, and compared with `grpo_schema.engine.schedule.walk` fed the same permutations.
"""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
trl = pytest.importorskip("trl", reason="TRL 1.16 is a test-only oracle (pip install -e '.[test]')")
torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grpo_schema import check_mapping  # noqa: E402
from grpo_schema.engine.plan import derive_plan  # noqa: E402
from grpo_schema.engine.schedule import walk  # noqa: E402
from tests.trl_oracle import build_grpo_config  # noqa: E402

pytestmark = pytest.mark.oracle
BATCH_CODES = {"GRPO-B001", "GRPO-B002", "GRPO-B003", "GRPO-B004"}

GEOMETRY = st.fixed_dictionaries(
    {
        "per_device_train_batch_size": st.integers(1, 8),
        "num_generations": st.integers(2, 12),
        "gradient_accumulation_steps": st.integers(1, 6),
        "num_iterations": st.integers(1, 3),
    },
    optional={
        "generation_batch_size": st.integers(2, 96),
        "steps_per_generation": st.integers(1, 6),
        "eval_strategy": st.sampled_from(["no", "steps"]),
        "per_device_eval_batch_size": st.integers(1, 8),
        "num_generations_eval": st.integers(2, 8),
    },
)


def trl_config(values: dict, world_size: int):
    """GRPOConfig as TRL builds it at `world_size` (bf16 off), or the error TRL raises."""
    return build_grpo_config({"bf16": False, **values}, world_size)


def test_world_size_patch_reaches_trl():
    built = trl_config({"per_device_train_batch_size": 2, "num_generations": 2}, 5)
    assert built.generation_batch_size == 10  # 2 per process x 5 processes x 1 step: the patch reached TRL


@settings(max_examples=40, deadline=None)
@given(values=GEOMETRY)
def test_plan_and_batch_rules_match_trl_at_world_sizes_1_to_16(values):
    for world_size in range(1, 17):
        built = trl_config(values, world_size)
        result = check_mapping(values, world_size=world_size, suggest_fixes=False)
        batch_errors = sorted(d.code for d in result.diagnostics if d.code in BATCH_CODES and d.severity == "error")
        assert bool(batch_errors) == isinstance(built, ValueError), (values, world_size, built, batch_errors)
        if not isinstance(built, ValueError):
            plan = result.plan
            assert (plan.generation_batch_size, plan.steps_per_generation) == (
                built.generation_batch_size,
                built.steps_per_generation,
            )


def trl_rank_batches(plan, dataset_size: int, seed: int, rank: int, epochs: int) -> list[list[int]]:
    """What TRL's dataloader hands process `rank`, micro-step after micro-step, over `epochs` epochs."""
    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler
    from trl.trainer.utils import RepeatSampler

    sampler = RepeatSampler(
        range(dataset_size),
        mini_repeat_count=plan.num_generations,
        batch_size=plan.prompts_per_generation,
        repeat_count=plan.num_iterations * plan.steps_per_generation,
        shuffle=True,
        seed=seed,
    )
    shard = BatchSamplerShard(
        BatchSampler(sampler, plan.sampler_batch_size, drop_last=False),
        num_processes=plan.world_size,
        process_index=rank,
        split_batches=False,
    )
    return [batch for _ in range(epochs) for batch in shard]


def permutations(dataset_size: int, seed: int, epochs: int) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randperm(dataset_size, generator=generator).tolist() for _ in range(epochs)]


@settings(max_examples=30, deadline=None)
@given(
    values=st.fixed_dictionaries(
        {
            "per_device_train_batch_size": st.integers(1, 4),
            "num_generations": st.integers(2, 5),
            "steps_per_generation": st.integers(1, 3),
            "num_iterations": st.integers(1, 2),
            "gradient_accumulation_steps": st.integers(1, 4),
            "seed": st.integers(0, 2**31 - 1),
        }
    ),
    world_size=st.integers(1, 4),
    extra_prompts=st.integers(0, 9),
    generations=st.integers(1, 3),
)
def test_explain_prompt_order_matches_repeat_sampler_and_sharding(values, world_size, extra_prompts, generations):
    result = check_mapping(values, world_size=world_size)
    if result.plan is None:  # geometry TRL refuses at this world size
        return
    U = result.plan.prompts_per_generation
    size = generations * U + extra_prompts % U  # leave a remainder the sampler drops
    plan = derive_plan(result.config, world_size, dataset_size=size)
    epochs = 2
    orders = permutations(size, values["seed"], epochs)
    steps = walk(plan, micro_steps=epochs * plan.micro_steps_per_epoch, order=lambda epoch: orders[epoch])
    assert len(steps) == epochs * plan.micro_steps_per_epoch
    for rank in range(world_size):
        expected = trl_rank_batches(plan, size, values["seed"], rank, epochs)
        held = {s.micro_step: s.processes[rank] for s in steps if s.generates}
        predicted = [
            [
                p.index
                for p in held[step.copy_of if step.copy_of is not None else step.micro_step].prompts
                for _ in range(p.copies)
            ]
            for step in steps
        ]
        assert predicted == expected, (values, world_size, size, rank)
