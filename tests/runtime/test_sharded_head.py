"""The chunked LM head under sharding, on 2 CPU processes (gloo): FSDP2 (fully_shard, the root holding lm_head
as a sharded DTensor, with and without tied embeddings, and under accelerate's bf16 mixed-precision policy),
DeepSpeed ZeRO-3 (every parameter partitioned, tied and untied), and peft's modules_to_save on lm_head under both.
Each process scores its own rows through completion_logps with the chunked head and with the full logits; the
log-probs, entropies and every parameter's reduced whole gradient must agree, the chunked path must have been the
one taken (counted, and lm_head never returned more than the one kept position per row), and the weight must
really have been sharded."""

import importlib.util
import json

import pytest
import torch.multiprocessing as mp

from tests.support.env import free_port

from . import sharded_head_worker as worker

pytestmark = pytest.mark.slow
TOL = 1e-5


def run(target, tmp_path, cases) -> dict:
    mp.spawn(target, args=(2, free_port(), str(tmp_path), cases), nprocs=2, join=True)
    return {
        (case["name"], rank): json.loads((tmp_path / f"{case['name']}-{rank}.json").read_text())
        for case in cases
        for rank in range(2)
    }


def assert_chunked_equal(seen: dict, tol: float) -> None:
    assert seen["chunkable"]
    assert seen["counted"] == {"chunked": {"chunked": 1, "full": 0}, "full": {"chunked": 0, "full": 1}}
    # the model's own lm_head call kept one position per row; the full path's kept C + 1 = 8
    assert seen["widest"] == {"chunked": 1, "full": 8}
    assert seen["logp"] <= tol and seen["entropy"] <= tol, seen
    assert seen["grad"] <= tol * max(1.0, seen["grad_scale"]), seen
    assert seen["grad_scale"] > 1e-3  # the gradients compared are not all zero


def test_fsdp2_sharded_head_is_chunked_and_equals_the_full_logits(tmp_path):
    cases = [
        dict(name="untied", tied=False),
        dict(name="tied", tied=True),
        dict(name="bf16", tied=False, bf16=True),
        dict(name="modules_to_save", tied=False, modules_to_save=True),
    ]
    results = run(worker.fsdp2, tmp_path, cases)
    for (name, rank), seen in results.items():
        assert seen["sharded"] == "DTensor"  # outside the root's forward lm_head.weight is a shard
        if name == "bf16":
            # both paths project in bf16 (FSDP2's param_dtype) and take the log-softmax in fp32: the same numbers
            # up to bf16 matmul rounding; the results stay fp32 (not FSDP2's output_dtype)
            assert seen["dtype"] == "torch.float32"
            assert_chunked_equal(seen, 2e-2)
        else:
            assert_chunked_equal(seen, TOL)


@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None, reason="deepspeed not installed")
def test_zero3_partitioned_head_is_chunked_and_equals_the_full_logits(tmp_path):
    results = run(
        worker.zero3,
        tmp_path,
        [
            dict(name="untied", tied=False),
            dict(name="tied", tied=True),
            dict(name="modules_to_save", tied=False, modules_to_save=True),
        ],
    )
    for seen in results.values():
        assert seen["partitioned"]
        assert_chunked_equal(seen, TOL)
