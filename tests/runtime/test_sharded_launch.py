"""Sharded training on 2 CPU processes (gloo), end to end through `grpo launch`: FSDP2 from the config's `fsdp`
field (train, checkpoint, resume bit-equal to the uninterrupted run, the same losses as DDP) and DeepSpeed ZeRO-2 /
ZeRO-3 (from the `deepspeed` field and from `accelerate_config: zero3`; ZeRO-3 resumes bit-equal), and ZeRO-3 with
the KL term's reference model (scored and mixed as under DDP). run_info.json says what really ran."""

import json
import os

import pytest
import torch
import yaml
from safetensors.torch import load_file

from tests.support.cli import grpo

from .helpers import base_settings, read_metrics, write_prompts

pytestmark = pytest.mark.slow
REWARD = "def token_sum(completion_ids, **kwargs):\n    return [float(sum(ids) % 7) for ids in completion_ids]\n"


@pytest.fixture
def launch_dir(tmp_path, monkeypatch):
    """A reward that varies within every group (so every step has a gradient), importable by each process."""
    (tmp_path / "shard_rewards.py").write_text(REWARD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def settings_for(tmp_path, model_dir, name, **fields):
    settings = base_settings(model_dir, write_prompts(tmp_path / "data.jsonl"), tmp_path / name)
    settings.update(
        per_device_train_batch_size=2,
        num_generations=4,
        gradient_accumulation_steps=2,
        max_steps=4,
        save_steps=2,
        reward_funcs=["shard_rewards.token_sum"],
    )
    settings.update(fields)
    return settings


def launch(tmp_path, settings, *extra) -> int:
    """`grpo launch CONFIG --num-processes 2` as a child process; a failed run fails the test with the end of what
    its processes printed, so the reason is in the assertion itself and not only in a long captured log."""
    config = tmp_path / f"{os.path.basename(settings['output_dir'])}.yaml"
    config.write_text(yaml.safe_dump(settings))
    done = grpo("launch", str(config), "--num-processes", "2", *extra, subprocess=True, timeout=900)
    if done.returncode != 0:
        printed = [line for line in (done.stdout + done.stderr).splitlines() if "[WARNING]" not in line]
        pytest.fail(f"grpo launch exited with {done.returncode}; the end of its output:\n" + "\n".join(printed[-60:]))
    return done.returncode


def weights(directory):
    return load_file(str(directory / "model.safetensors"))


def run_info(directory):
    return json.loads((directory / "run_info.json").read_text())


def test_fsdp_trains_resumes_bit_equal_and_matches_ddp(launch_dir, tiny_model_dir):
    tmp = launch_dir
    fsdp = settings_for(tmp, tiny_model_dir, "fsdp", fsdp="full_shard auto_wrap")
    assert launch(tmp, fsdp) == 0
    info = run_info(tmp / "fsdp")
    assert info["distributed_type"] == "FSDP" and info["sharding"].startswith("FSDP2")
    assert info["world_size"] == 2 and info["generation_backend"] == "transformers"
    assert len(info["config_sha256"]) == 64 and info["versions"]["torch"] == torch.__version__
    assert [r["step"] for r in read_metrics(tmp / "fsdp")] == [1, 2, 3, 4]
    saved = weights(tmp / "fsdp" / "checkpoint-2")  # gathered whole weights, loadable without FSDP
    assert saved["model.embed_tokens.weight"].shape == weights(tiny_model_dir)["model.embed_tokens.weight"].shape

    resumed = dict(
        fsdp, output_dir=str(tmp / "fsdp-resumed"), resume_from_checkpoint=str(tmp / "fsdp" / "checkpoint-2")
    )
    assert launch(tmp, resumed) == 0
    a, b = weights(tmp / "fsdp"), weights(tmp / "fsdp-resumed")
    assert all(torch.equal(a[name], b[name]) for name in a)
    assert [r["loss"] for r in read_metrics(tmp / "fsdp-resumed")] == [r["loss"] for r in read_metrics(tmp / "fsdp")][
        2:
    ]

    assert launch(tmp, settings_for(tmp, tiny_model_dir, "ddp")) == 0
    assert run_info(tmp / "ddp")["distributed_type"] == "MULTI_CPU"
    for mine, theirs in zip(read_metrics(tmp / "fsdp"), read_metrics(tmp / "ddp"), strict=True):
        assert mine["reward"] == theirs["reward"]  # the same completions were sampled
        assert mine["loss"] == pytest.approx(theirs["loss"], abs=1e-5)
        assert mine["grad_norm"] == pytest.approx(theirs["grad_norm"], rel=1e-4)
    c = weights(tmp / "ddp")
    # both run the chunked head (training/lm_head.py; under FSDP2 inside a registered forward method of the root,
    # test_sharded_head.py); FSDP2's reduce-scatter and DDP's all-reduce sum in different orders: fp32 rounding,
    # which Adam's g / sqrt(v) turns into small weight differences after 4 steps at lr 0.01 on the gradients'
    # near-zero entries: 3.4e-5 measured (the losses and grad norms still agree)
    assert all(torch.allclose(a[name], c[name], atol=1e-4) for name in a)


@pytest.mark.skipif(__import__("importlib").util.find_spec("deepspeed") is None, reason="deepspeed not installed")
@pytest.mark.parametrize("stage", [2, 3])
def test_deepspeed_zero_trains_on_cpu_processes(launch_dir, tiny_model_dir, stage):
    tmp = launch_dir
    if stage == 2:  # the training argument, as a mapping with "auto" values
        settings = settings_for(
            tmp,
            tiny_model_dir,
            "zero2",
            max_steps=2,
            save_steps=2,
            deepspeed={
                "zero_optimization": {"stage": 2},
                "train_micro_batch_size_per_gpu": "auto",
                "gradient_accumulation_steps": "auto",
                "gradient_clipping": "auto",
            },
        )
    else:  # the accelerate launch key of a `trl grpo` recipe
        settings = settings_for(tmp, tiny_model_dir, "zero3", max_steps=2, save_steps=1, accelerate_config="zero3")
    assert launch(tmp, settings) == 0
    out = tmp / f"zero{stage}"
    info = run_info(out)
    assert info["distributed_type"] == "DEEPSPEED" and info["sharding"] == f"DeepSpeed ZeRO-{stage}"
    metrics = read_metrics(out)
    assert [r["step"] for r in metrics] == [1, 2]
    assert all(r["grad_norm"] > 0 for r in metrics)
    trained, start = weights(out), weights(tiny_model_dir)
    assert trained.keys() <= start.keys() | {"lm_head.weight"}
    assert any(not torch.equal(trained[name], start[name]) for name in trained if name in start)
    assert (out / "checkpoint-2" / "deepspeed").is_dir()
    if stage == 3:  # resume from DeepSpeed's partitions: bit-equal to the uninterrupted run
        resumed = dict(
            settings, output_dir=str(tmp / "zero3-resumed"), resume_from_checkpoint=str(out / "checkpoint-1")
        )
        assert launch(tmp, resumed) == 0
        again = weights(tmp / "zero3-resumed")
        assert all(torch.equal(trained[name], again[name]) for name in trained)
        assert read_metrics(tmp / "zero3-resumed")[0]["loss"] == metrics[1]["loss"]


@pytest.mark.parametrize("sharding", ["fsdp", "zero3"])
def test_load_best_model_at_end_puts_the_best_sharded_weights_back(launch_dir, tiny_model_dir, sharding):
    if sharding == "zero3" and __import__("importlib").util.find_spec("deepspeed") is None:
        pytest.skip("deepspeed not installed")
    tmp = launch_dir
    write_prompts(tmp / "split" / "train.jsonl")
    write_prompts(tmp / "split" / "test.jsonl")
    shard = dict(fsdp="full_shard auto_wrap") if sharding == "fsdp" else dict(accelerate_config="zero3")
    # num_tokens only grows: with "lower is better" step 1 stays the best of two
    settings = settings_for(
        tmp,
        tiny_model_dir,
        f"best-{sharding}",
        dataset_name=str(tmp / "split"),
        max_steps=2,
        save_steps=1,
        eval_strategy="steps",
        eval_steps=1,
        per_device_eval_batch_size=4,
        metric_for_best_model="num_tokens",
        greater_is_better=False,
        load_best_model_at_end=True,
        **shard,
    )
    assert launch(tmp, settings) == 0
    out = tmp / f"best-{sharding}"
    final, best, last = weights(out), weights(out / "checkpoint-1"), weights(out / "checkpoint-2")
    assert all(torch.equal(final[name], best[name]) for name in final)
    assert not all(torch.equal(final[name], last[name]) for name in final)


@pytest.mark.skipif(__import__("importlib").util.find_spec("deepspeed") is None, reason="deepspeed not installed")
def test_zero3_reference_model_scores_and_mixes_like_ddp(launch_dir, tiny_model_dir):
    """beta != 0 under ZeRO-3: the reference is partitioned and run by a DeepSpeed engine of its own
    (sharding.prepare_reference); before, it was built partitioned with nothing to gather it, and its first forward
    failed ("'weight' must be 2-D"). sync_ref_model mixes the policy into it every step."""
    tmp = launch_dir
    fields = dict(
        max_steps=2, save_steps=1, beta=0.04, sync_ref_model=True, ref_model_sync_steps=1, ref_model_mixup_alpha=0.5
    )
    assert launch(tmp, settings_for(tmp, tiny_model_dir, "ref-zero3", accelerate_config="zero3", **fields)) == 0
    assert launch(tmp, settings_for(tmp, tiny_model_dir, "ref-ddp", **fields)) == 0
    zero3, ddp = tmp / "ref-zero3", tmp / "ref-ddp"
    assert run_info(zero3)["sharding"] == "DeepSpeed ZeRO-3" and run_info(ddp)["distributed_type"] == "MULTI_CPU"
    mine, theirs = read_metrics(zero3), read_metrics(ddp)
    # step 1 scores completions of the unchanged policy: k3 = exp(d) - d - 1 is zero only where the reference's
    # log-prob equals the policy's, so a zero mean says every token's reference log-prob was the policy's
    assert mine[0]["kl"] == theirs[0]["kl"] == 0.0
    for a, b in zip(mine, theirs, strict=True):
        assert a["reward"] == b["reward"]  # the same completions were sampled
        # step 2's reference is the mixed one. ZeRO-3's reduce-scatter and DDP's all-reduce sum the gradients in
        # different orders; Adam's first step (about lr * sign(g)) turns that fp32 rounding into weight differences
        # up to 5e-5 on near-zero gradient entries: the KL terms then differ by 1.1e-4 relative (measured)
        assert a["kl"] == pytest.approx(b["kl"], rel=1e-3, abs=1e-9)
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-3, abs=1e-9)
    assert mine[1]["kl"] > 1e-4  # the policy moved away from the reference
    # the reference each checkpoint gathered from the partitions is the mix of the whole weights, computed in fp32
    # as here: equal up to rounding of the same operations
    previous = weights(tiny_model_dir)
    for step in (1, 2):
        policy, reference = weights(zero3 / f"checkpoint-{step}"), weights(zero3 / f"checkpoint-{step}" / "reference")
        assert reference.keys() == policy.keys()
        for name in reference:
            assert torch.allclose(reference[name], 0.5 * policy[name] + 0.5 * previous[name], atol=1e-7), name
        assert any(not torch.equal(reference[name], previous[name]) for name in reference)
        previous = reference
    assert all(
        torch.allclose(previous[name], tensor, atol=1e-4)
        for name, tensor in weights(ddp / "checkpoint-2" / "reference").items()
    )
    # resuming puts checkpoint-1's reference back into the partitions: step 2 mixes it again, bit-equal
    resumed = settings_for(
        tmp,
        tiny_model_dir,
        "ref-zero3-resumed",
        accelerate_config="zero3",
        resume_from_checkpoint=str(zero3 / "checkpoint-1"),
        **fields,
    )
    assert launch(tmp, resumed) == 0
    again = weights(tmp / "ref-zero3-resumed" / "checkpoint-2" / "reference")
    assert all(torch.equal(again[name], previous[name]) for name in previous)
    assert read_metrics(tmp / "ref-zero3-resumed")[0]["kl"] == mine[1]["kl"]
