"""Server mode without a server, and the pieces of vLLM generation that need no engine (run everywhere)."""

import time

import pytest

from grpo_runtime.distributed.weights import checkpoint_name, full_named_parameters, parameter_metadata
from grpo_runtime.generation.backend import vllm_sampling_settings
from grpo_runtime.generation.backends import backend_name
from grpo_runtime.generation.vllm_colocate import runs
from grpo_runtime.launch.cli import train_command

from .helpers import base_settings, validated


def closed_port() -> int:
    import socket

    with socket.socket() as handle:
        handle.bind(("127.0.0.1", 0))
        return handle.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_unreachable_server_stops_the_run_before_training_with_a_clear_error(tmp_path, tiny_model_dir, capsys):
    import yaml

    (tmp_path / "d.jsonl").write_text('{"prompt": "say cat", "target": "cat"}\n' * 8)
    settings = base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "out")
    port = closed_port()
    settings.update(
        use_vllm=True,
        vllm_mode="server",
        vllm_server_base_url=f"http://127.0.0.1:{port}",
        vllm_server_timeout=3,
        use_cpu=True,
    )
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(settings))
    started = time.monotonic()
    assert train_command([str(config)]) == 4
    err = capsys.readouterr().err
    assert f"no vLLM server answers at http://127.0.0.1:{port} after 3 s" in err and "trl vllm-serve" in err
    assert "Traceback" not in err
    assert time.monotonic() - started < 60
    assert not list((tmp_path / "out").glob("checkpoint-*"))


def test_consecutive_copies_of_a_prompt_are_sent_once():
    rows = [[1, 2]] * 3 + [[5]] * 4 + [[1, 2]]
    assert runs(rows) == [([1, 2], 3), ([5], 4), ([1, 2], 1)]


def test_vllm_sampling_settings_equal_the_transformers_ones(tmp_path):
    settings = base_settings("m", tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(
        use_vllm=True,
        temperature=0.7,
        top_p=0.9,
        top_k=20,
        min_p=0.05,
        repetition_penalty=1.1,
        max_completion_length=12,
        generation_kwargs={"seed": 3},
    )
    config = validated(settings).config
    assert backend_name(config) == "vllm-colocate"
    assert vllm_sampling_settings(config, [3, 7], 4) == dict(
        n=4,
        temperature=0.7,
        top_p=0.9,
        top_k=20,
        min_p=0.05,
        repetition_penalty=1.1,
        max_tokens=12,
        logprobs=0,
        stop_token_ids=[3, 7],
        seed=3,
    )


def test_weights_are_named_as_in_the_checkpoint(tiny_policy):
    model, _ = tiny_policy
    names = [name for name, _ in full_named_parameters(model)]
    assert names == [name for name, _ in model.named_parameters()]
    assert [m[0] for m in parameter_metadata(model)] == names
    assert (
        checkpoint_name("module._fsdp_wrapped_module.model.layers.0._checkpoint_wrapped_module.mlp.weight")
        == "model.layers.0.mlp.weight"
    )
    assert checkpoint_name("base_model.model.model.layers.0.q_proj.base_layer.weight") == "model.layers.0.q_proj.weight"


def test_lora_weights_are_merged_while_read(tiny_policy):
    peft = pytest.importorskip("peft")
    import copy

    import torch

    model = copy.deepcopy(tiny_policy[0])
    wrapped = peft.get_peft_model(model, peft.LoraConfig(r=2, target_modules=["q_proj"], init_lora_weights=False))
    before = {n: p.detach().clone() for n, p in wrapped.named_parameters()}
    merged = dict((n, t.clone()) for n, t in full_named_parameters(wrapped))
    assert set(merged) == {n for n, _ in tiny_policy[0].named_parameters()}
    base = tiny_policy[0].state_dict()
    assert not torch.equal(
        merged["model.layers.0.self_attn.q_proj.weight"], base["model.layers.0.self_attn.q_proj.weight"]
    )  # the adapter is in the merged weight
    assert torch.equal(merged["model.layers.0.mlp.up_proj.weight"], base["model.layers.0.mlp.up_proj.weight"])
    assert all(torch.allclose(before[n], p, atol=1e-6) for n, p in wrapped.named_parameters())  # unmerged again


class OneProcess:
    """The two things sampling_correction asks of the run's parts, for a single process."""

    device = "cpu"

    @staticmethod
    def gather(tensor):
        return tensor


@pytest.mark.parametrize(
    "mode, expected_ratio",
    [
        ("token_truncate", [[1.0, 2.0, 1.0], [0.5, 1.0, 1.0]]),  # clip_max 2: exp(1) -> 2
        ("token_mask", [[1.0, 0.0, 1.0], [0.5, 1.0, 1.0]]),
        ("sequence_mask", [[0.0], [0.5]]),  # exp(0 + 1 + nan->0) = e > 2 is dropped; exp(log 0.5) kept
        ("sequence_truncate", [[2.0], [0.5]]),
    ],
)
def test_sampling_correction_ratio_and_metrics(tmp_path, mode, expected_ratio):
    import math

    import torch

    from grpo_runtime.generation.rollout import Rollout
    from grpo_runtime.training.batch import sampling_correction

    settings = base_settings("m", tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(use_vllm=True, vllm_importance_sampling_mode=mode, vllm_importance_sampling_clip_max=2.0)
    config = validated(settings).config
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    rollout = Rollout(
        prompt_ids=None,
        prompt_mask=None,
        completion_ids=None,
        completion_mask=mask,
        truncated=None,
        completion_lengths=None,
        prompt_lengths=None,
    )
    old = torch.tensor([[-1.0, -1.0, -2.0], [-2.0, -1.0, -1.0]])
    sampled = torch.tensor([[-1.0, -2.0, math.nan], [-2.0 - math.log(0.5), 0.0, 0.0]])
    ratio, metrics = sampling_correction(OneProcess(), config, rollout, {"old_logps": old, "sampling_logps": sampled})
    assert torch.allclose(ratio, torch.tensor(expected_ratio), atol=1e-6)
    # |old - sampled| over active tokens with a known sampler log-prob: 0, 1, log 2
    assert metrics["sampling/sampling_logp_difference/mean"] == pytest.approx((1 + math.log(2)) / 3)
    assert metrics["sampling/sampling_logp_difference/max"] == pytest.approx(1.0)
    applied = (
        torch.tensor(expected_ratio).flatten()
        if mode.startswith("sequence")
        else torch.tensor(expected_ratio)[mask.bool()]
    )
    assert metrics["sampling/importance_sampling_ratio/min"] == pytest.approx(applied.min().item())
    assert metrics["sampling/importance_sampling_ratio/mean"] == pytest.approx(applied.mean().item())
    assert metrics["sampling/importance_sampling_ratio/max"] == pytest.approx(applied.max().item())


def test_colocate_without_vllm_installed_is_refused_before_training(tmp_path, tiny_model_dir, capsys):
    import importlib.util

    import yaml

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed in this environment: nothing to refuse")
    settings = base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(use_vllm=True, vllm_mode="colocate")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(settings))
    assert train_command([str(config)]) == 3
    err = capsys.readouterr().err
    assert "use_vllm: true needs the vllm package" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
