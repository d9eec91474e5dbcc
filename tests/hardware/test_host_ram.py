"""Host RAM: the plan's host-RAM line per node, its verdict (--host-ram, the nodes of the catalogue, GRPO-H010), and
its calibration against DeepSpeed ZeRO-3 with both CPU offloads on 2 CPU processes (memprobe).

On a CPU run the device and the host are the same memory, so a process's resident set is the per-device parts
(weights' shard, gathered layers, activations, head, the gradient partition DeepSpeed keeps beside the device)
plus what it offloads (fp32 master, fp32 gradients, Adam's moments, the parameter partition): the plan's two
lines together, held within 20% of each process's measured peak."""

import importlib
import json
import os
from pathlib import Path

import pytest

from grpo_schema.commands.plan import check_for_hardware, memory_lines
from grpo_schema.engine.hardware.accelerators import GIB, parse_hardware
from grpo_schema.engine.hardware.host import estimate_host
from grpo_schema.engine.hardware.memory import estimate_memory
from tests.support.cli import grpo

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "launch"
BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "dtype": "bfloat16",
    "bf16": True,
    "per_device_train_batch_size": 4,
    "num_generations": 8,
    "max_completion_length": 1024,
}
OFFLOADED = {**BASE, "accelerate_config": str(FIXTURES / "zero3_offload.yaml")}


def plan(config, hardware, **options):
    result, report = check_for_hardware(
        config, str(REPO / "run.yaml"), hardware, prompt_length=256, batch_fixes=False, **options
    )
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    return report


def test_offloaded_states_are_deepspeeds_cpu_figures():
    report = plan(OFFLOADED, "8xA100-40GB")
    N, host = report.model.total_params(), report.host
    # DeepSpeed's estimator: 18 bytes a parameter per node with both offloads (x1.5 its buffer allowance)
    assert host.part("offloaded states") == pytest.approx(18 * N)
    assert host.deepspeed_estimate == pytest.approx(18 * N * 1.5)
    optimizer_only = plan(OFFLOADED, "8xA100-40GB", offload="optimizer").host
    assert optimizer_only.part("offloaded states") == pytest.approx(16 * N)
    assert plan(BASE, "8xA100-40GB").host.part("offloaded states") == 0  # no offload: nothing kept there
    # two nodes of 8: each node holds its own processes' shards, half of it
    assert plan(OFFLOADED, "2x8xA100-40GB").host.part("offloaded states") == pytest.approx(9 * N)


def test_loading_peak_by_strategy():
    ddp = plan(BASE, "8xA100-80GB").host
    assert ddp.part("model loading") == 8 * 2 * ddp_model_params(BASE)  # each process loads the whole model
    zero3 = plan({**BASE, "accelerate_config": "zero3"}, "8xA100-80GB")
    assert zero3.host.part("model loading") == 8 * 2 * zero3.model.largest_layer_params()  # zero.Init


def ddp_model_params(config) -> int:
    return plan(config, "8xA100-80GB").model.total_params()


def test_host_ram_verdict_and_the_node_catalogue():
    small = plan(OFFLOADED, "8xA100-40GB", host_ram=64)
    assert [d.code for d in small.diagnostics if d.code == "GRPO-H010"] == ["GRPO-H010"]
    h010 = next(d for d in small.diagnostics if d.code == "GRPO-H010")
    assert "offloaded states" in h010.message and "--host-ram: 64 GiB" in h010.message
    big = plan(OFFLOADED, "p4d.24xlarge")  # 8x A100-40GB and 1152 GiB of RAM
    assert big.hardware.gpus == 8 and big.host_capacity == 1152 * GIB
    assert not any(d.code == "GRPO-H010" for d in big.diagnostics)
    assert parse_hardware("2xp5.48xlarge").gpus == 16
    lines = memory_lines(big)
    assert any(
        line.startswith("host RAM per node: ") and "of 1152 GiB (the node p4d.24xlarge; fits)" in line for line in lines
    )
    assert any("offload_param_device cpu" in line for line in lines)


def test_grpo_validate_hardware_prints_the_memory_lines(tmp_path):
    import yaml

    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(OFFLOADED))
    run = grpo("validate", str(path), "--hardware", "p4d.24xlarge")
    assert run.returncode == 0, run.stderr
    _, report = check_for_hardware(path.read_bytes(), str(path), "p4d.24xlarge", batch_fixes=False)
    for line in memory_lines(report):
        assert "  " + line in run.stdout


def required(module: str, reason: str):
    """pytest.importorskip, except under CI (CI=true, whose environment installs the deepspeed extra): there a
    missing module fails the calibration instead of skipping it."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=reason)


def test_under_ci_a_missing_module_fails_the_calibration(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ModuleNotFoundError):
        required("deepspeed_that_is_not_there", "absent")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        required("deepspeed_that_is_not_there", "absent")


@pytest.mark.slow
def test_zero3_offload_host_ram_on_two_cpu_processes():
    """~30 s on an idle 2-core machine (2 fresh processes; more under load). Never skipped under CI."""
    from dataclasses import replace

    from tests.support.memprobe import ZERO3, facts_of, measured, setup_of

    required("deepspeed", reason="the calibration runs DeepSpeed's CPU offload")
    case = {**ZERO3, "offload": "both"}
    got = measured(case, "cpu")
    model = facts_of(case)
    setup = replace(setup_of(case, "cpu"), offload_optimizer=True, offload_params=True)
    device, host = estimate_memory(model, setup), estimate_host(model, setup, processes=1)
    predicted = device.total + host.phase_total("held")
    held = device.phase_total("held") + host.phase_total("held")
    load = os.getloadavg()[0]
    for rank in got["ranks"]:
        shown = json.dumps(
            {
                "total": [round(predicted / 1e6, 1), round(rank["total"] / 1e6, 1)],
                "held": [round(held / 1e6, 1), round(rank["held"] / 1e6, 1)],
                "load": round(load, 2),
            }
        )
        print("predicted, measured (MB):", shown)
        assert abs(predicted - rank["total"]) <= 0.2 * rank["total"], shown
        assert abs(held - rank["held"]) <= 0.2 * rank["held"], shown
