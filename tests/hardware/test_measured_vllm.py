"""The estimate against measurement with a colocated vLLM engine (vllm_mode: colocate): grpo_runtime's own
ColocateBackend built from a run config beside the policy, one generation (weights loaded into the engine, a
batch decoded), then the training step (grpo_runtime.memprobe). The planner's `vllm` part and the total
within 15%.

Needs a real vLLM engine: it runs in the vLLM environment (scripts/setup-vllm.sh builds .venv-vllm; scripts/test.sh
runs the vllm-marked tests with its interpreter) and is skipped elsewhere. On a CPU vLLM keeps its own copy of the
weights and a KV cache of VLLM_CPU_KVCACHE_SPACE (grpo_runtime's default 1 GiB), which the planner models for
device "cpu"; on a GPU its share is vllm_gpu_memory_utilization of the card. About 1 min of CPU time (one engine
start)."""

import pytest

from grpo_schema.engine.hardware.memory import estimate_memory
from tests.support.memprobe import TOLERANCE, close, facts_of, measured, pairs, setup_of

pytest.importorskip("torch", reason="the measurement runs grpo_runtime (the runtime extra)")
pytest.importorskip(
    "vllm",
    reason="the colocated engine needs vLLM: scripts/setup-vllm.sh builds .venv-vllm, and "
    "scripts/test.sh runs this module with its interpreter",
)

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

VLLM = dict(
    hidden=256, layers=2, intermediate=768, heads=4, kv_heads=2, vocab=16000, batch=4, prompt=32, completion=32, vllm={}
)


def test_estimate_matches_grpo_runtime_with_vllm_colocate():
    from dataclasses import replace

    got = measured(VLLM, "cpu")
    setup = replace(setup_of(VLLM, "cpu"), use_vllm=True, vllm_mode="colocate")
    estimate = estimate_memory(facts_of(VLLM), setup)
    # every part the run without vLLM has, as in the other cases
    report = {name: pair for name, pair in pairs(VLLM, got, "cpu").items() if name != "total"}
    report["vllm"] = (estimate.part("vllm"), got["vllm"])
    report["total"] = (estimate.total, got["total"])
    shown = {name: (round(ours / 1e6, 1), round(theirs / 1e6, 1)) for name, (ours, theirs) in report.items()}
    print("predicted, measured (MB):", shown)  # pytest -rP shows it
    assert got["generated_tokens"] == VLLM["batch"] * VLLM["completion"], got  # the engine really decoded
    wrong = [name for name, (ours, theirs) in report.items() if name != "total" and not close(ours, theirs)]
    assert not wrong, (wrong, shown)
    ours, theirs = report["total"]
    assert abs(ours - theirs) <= TOLERANCE * theirs, shown
