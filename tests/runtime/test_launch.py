"""`grpo launch` with 2 CPU processes (torchrun + gloo): the run completes and each process generates for the
prompts the plan assigns to it."""

import json

import pytest
import torch
import yaml
from safetensors.torch import load_file

from grpo_runtime.launch.cli import launch_command

from .helpers import base_settings, read_metrics, write_prompts

pytestmark = pytest.mark.slow


def expected_rows(seed, num_prompts, prompts_per_generation, num_generations, rank, rows, generation):
    """grpo-runtime.md §2.2, stated independently: permutation of the seeded generator, chunk k of U prompts,
    each repeated G times in a row, rank p takes the p-th contiguous slice of b*s rows."""
    per_epoch = num_prompts // prompts_per_generation
    generator = torch.Generator().manual_seed(seed)
    for _ in range(generation // per_epoch + 1):
        permutation = torch.randperm(num_prompts, generator=generator).tolist()
    start = (generation % per_epoch) * prompts_per_generation
    chunk = permutation[start : start + prompts_per_generation]
    expanded = [i for i in chunk for _ in range(num_generations)]
    return expanded[rank * rows : (rank + 1) * rows]


def test_two_process_launch_assigns_prompts_by_the_plan_and_resumes_exactly(tmp_path, tiny_model_dir, monkeypatch):
    out = tmp_path / "out"
    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), out)
    # b*s = 6 is not a multiple of G = 4: one group straddles the two processes
    settings.update(
        per_device_train_batch_size=3,
        num_generations=4,
        steps_per_generation=2,
        num_iterations=2,
        gradient_accumulation_steps=2,
        max_steps=6,
        save_steps=3,
        env={"GRPO_TEST_MARKER": "set"},
        reward_funcs=settings["reward_funcs"] + ["launch_rewards.token_sum"],
    )
    # a reward that varies within every group, imported by dotted path from the launch directory in each process
    (tmp_path / "launch_rewards.py").write_text(
        "def token_sum(completion_ids, **kwargs):\n    return [float(sum(ids) % 7) for ids in completion_ids]\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRPO_TEST_MARKER", "from the shell")  # the config's env: section must overwrite it

    assert launch_command([str(config), "--num-processes", "2"]) == 0
    assert __import__("os").environ["GRPO_TEST_MARKER"] == "set"

    assert [r["step"] for r in read_metrics(out)] == [1, 2, 3, 4, 5, 6]
    assert (out / "model.safetensors").exists()
    # B_gen = 3 * 2 * 2 = 12 completions = 3 prompts; a generation every s*mu = 4 micro-steps = 2 optimizer steps
    logs = {}
    for rank in (0, 1):
        lines = [json.loads(x) for x in (out / "prompt_assignment" / f"rank-{rank}.jsonl").read_text().splitlines()]
        assert [x["micro_step"] for x in lines] == [0, 4, 8]
        for line in lines:
            assert line["rows"] == expected_rows(3, 16, 3, 4, rank, 6, line["generation"])
        logs[rank] = lines
    # advantages come from the rewards of BOTH processes: the group that straddles them is normalised as one
    for mine, theirs in zip(logs[0], logs[1]):
        rewards = torch.tensor([sum(r) for r in mine["rewards"] + theirs["rewards"]]).view(-1, 4)  # [3 groups, G]
        assert rewards[1].std() > 0  # the straddling group (rows 4-7) is not flat
        expected = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)
        got = torch.tensor(mine["advantages"] + theirs["advantages"]).view(-1, 4)
        assert torch.allclose(got, expected, atol=1e-5)

    # resuming mid-generation (step 3 of a generation spanning steps 3-4) restores each process's RNG and buffer
    resumed = dict(settings, output_dir=str(tmp_path / "resumed"), resume_from_checkpoint=str(out / "checkpoint-3"))
    config.write_text(yaml.safe_dump(resumed))
    assert launch_command([str(config), "--num-processes", "2"]) == 0
    a, b = load_file(str(out / "model.safetensors")), load_file(str(tmp_path / "resumed" / "model.safetensors"))
    assert all(torch.equal(a[name], b[name]) for name in a)
    assert [r["step"] for r in read_metrics(tmp_path / "resumed")] == [4, 5, 6]
