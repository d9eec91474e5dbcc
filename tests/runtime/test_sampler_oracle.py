"""The prompt order of grpo_runtime.training.sampler against TRL's own pieces: RepeatSampler, the dataloader batches of
b*s rows, and accelerate's BatchSamplerShard that deals them to the processes."""

import pytest
from torch.utils.data import BatchSampler

from grpo_runtime.training.sampler import PromptOrder, micro_steps_per_epoch, optimizer_windows, process_rows
from grpo_schema import GRPORunConfig, derive_plan

pytestmark = pytest.mark.oracle
RepeatSampler = pytest.importorskip("trl.trainer.utils", reason="needs trl==1.16.0").RepeatSampler
BatchSamplerShard = pytest.importorskip("accelerate.data_loader").BatchSamplerShard

PLANS = [  # (processes, b, G, s, mu, GA, prompts, shuffle)
    (1, 4, 4, 1, 1, 1, 10, True),
    (2, 4, 4, 2, 2, 2, 16, True),  # the worked example of grpo-runtime.md §2.5
    (2, 3, 4, 2, 1, 2, 9, True),  # b*s = 6: a group straddles the two processes
    (3, 2, 3, 3, 1, 1, 20, True),
    (4, 2, 8, 1, 3, 5, 13, True),
    (2, 4, 2, 1, 1, 3, 7, False),
]


def plan_for(P, b, G, s, mu, GA):
    config = GRPORunConfig.model_validate(
        dict(
            per_device_train_batch_size=b,
            num_generations=G,
            steps_per_generation=s,
            num_iterations=mu,
            gradient_accumulation_steps=GA,
        ),
        context={"world_size": P},
    )  # the model checks the batch geometry at the declared world size
    return derive_plan(config, P)


def trl_batches(P, b, G, s, mu, prompts, shuffle, seed, rank, epochs):
    """The per-micro-step dataloader batches process `rank` receives from TRL's pipeline."""
    plan_u = (b * P * s) // G
    sampler = RepeatSampler(
        list(range(prompts)), mini_repeat_count=G, batch_size=plan_u, repeat_count=mu * s, shuffle=shuffle, seed=seed
    )
    batches = []
    for _ in range(epochs):  # the sampler's generator carries over between epochs, as in training
        shard = BatchSamplerShard(
            BatchSampler(sampler, b * s, drop_last=False),
            num_processes=P,
            process_index=rank,
            split_batches=False,
            even_batches=True,
        )
        batches.append(list(shard))
    return batches


@pytest.mark.parametrize("P,b,G,s,mu,GA,prompts,shuffle", PLANS)
@pytest.mark.parametrize("seed", [0, 42])
def test_each_process_gets_trl_rows_on_every_micro_step(P, b, G, s, mu, GA, prompts, shuffle, seed):
    plan = plan_for(P, b, G, s, mu, GA)
    order = PromptOrder(prompts, plan.prompts_per_generation, shuffle, seed)
    for rank in range(P):
        epochs = trl_batches(P, b, G, s, mu, prompts, shuffle, seed, rank, epochs=3)
        micro = 0
        for epoch in epochs:
            assert len(epoch) == micro_steps_per_epoch(prompts, plan)
            for batch in epoch:
                generation = micro // plan.generate_every_micro_steps
                ours = process_rows(order.chunk(generation), G, rank, plan.completions_per_process_per_generation)
                # batches between generations are the sampler's repeats: the buffer ignores them, and they are
                # copies of the one used for generating
                assert batch == ours, (rank, micro)
                micro += 1


def test_worked_example_of_the_spec():
    """§2.5: seed 0, 16 prompts, P=2, b=4, G=4, s=2, mu=2: chunks {12,10,9,6}, {11,8,13,5}, {2,14,15,0}."""
    plan = plan_for(2, 4, 4, 2, 2, 2)
    order = PromptOrder(16, plan.prompts_per_generation, True, 0)
    assert [order.chunk(k) for k in range(4)] == [[12, 10, 9, 6], [11, 8, 13, 5], [2, 14, 15, 0], [4, 3, 7, 1]]
    assert process_rows(order.chunk(0), 4, 1, 8) == [9] * 4 + [6] * 4


@pytest.mark.parametrize("P,b,G,s,mu,GA,prompts,shuffle", PLANS)
def test_optimizer_windows_follow_the_hf_epoch_split(P, b, G, s, mu, GA, prompts, shuffle):
    """Windows of GA micro-steps per epoch, the last one shorter; micro-step indices continue across epochs."""
    plan = plan_for(P, b, G, s, mu, GA)
    per_epoch = micro_steps_per_epoch(prompts, plan)
    windows = list(optimizer_windows(prompts, plan, last_step=3 * -(-per_epoch // GA)))
    expected, micro = [], 0
    for epoch in range(3):
        in_epoch = list(range(micro, micro + per_epoch))
        expected += [in_epoch[i : i + GA] for i in range(0, per_epoch, GA)]
        micro += per_epoch
    assert [list(w.micro_steps) for w in windows] == expected
    assert windows[-1].epoch_progress == 3.0
