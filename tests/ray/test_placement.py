"""How `grpo launch --ray` splits a run over a cluster's nodes (grpo_runtime.clusters.ray.placement), on node lists as Ray
reports them: the fewest equal machines the nodes hold, the vLLM server's bundle of the open-r1 layout counted, and
`trl vllm-serve` as Slurm's vLLM node runs it. (tests/ray/test_ray_jobs.py places runs on a real cluster.)"""

from __future__ import annotations

from types import SimpleNamespace

from grpo_runtime.clusters.ray.placement import _sized, holds, placement, server_for


def nodes(*shapes: tuple[float, float]) -> list[dict]:
    return [
        {"id": str(i), "ip": f"10.0.0.{i}", "resources": {"CPU": cpu, "GPU": gpu}}
        for i, (cpu, gpu) in enumerate(shapes)
    ]


def test_a_run_stays_on_one_node_when_it_fits_and_spreads_when_not():
    assert placement(nodes((64, 8), (64, 8)), 8, 1, 1).machines == 1
    spread = placement(nodes((64, 8), (64, 8)), 16, 1, 1)
    assert (spread.machines, spread.per_machine) == (2, 8)
    assert placement(nodes((64, 8), (64, 8)), 24, 1, 1) is None
    assert placement(nodes((1, 0), (1, 0)), 2, 1, 0).machines == 2  # the test cluster: a machine on each node
    assert placement(nodes((4, 0)), 4, 1, 0, per_machine=3) is None  # 3 does not divide 4


def test_the_vllm_servers_bundle_is_counted():
    config = SimpleNamespace(
        use_vllm=True,
        vllm_mode="server",
        vllm_server_base_url=None,
        vllm_server_port=8000,
        model_name_or_path="Qwen/Qwen2.5-1.5B-Instruct",
        model_revision="main",
        vllm_tensor_parallel_size=1,
        vllm_server_timeout=240,
        trust_remote_code=False,
    )
    server = _sized(server_for(config, "/venv/bin/python", 8), True)
    assert server["command"] == [
        "/venv/bin/trl",
        "vllm-serve",
        "--model",
        "Qwen/Qwen2.5-1.5B-Instruct",
        "--revision",
        "main",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--tensor_parallel_size",
        "1",
        "--data_parallel_size",
        "8",
    ]
    # open-r1: 7 training processes and a server of 8 GPUs need two 8-GPU nodes, not one
    assert placement(nodes((64, 8)), 7, 1, 1, server=server) is None
    placed = placement(nodes((64, 8), (64, 8)), 7, 1, 1, server=server)
    assert (placed.machines, placed.per_machine) == (1, 7) and "vLLM server of 8 GPU" in placed.describe()
    assert _sized(server, True) == server  # sizing again (a resume) changes nothing
    assert server_for(SimpleNamespace(**{**vars(config), "vllm_mode": "colocate"}), "python") is None


def test_bundles_of_several_sizes_go_largest_first():
    assert holds(nodes((8, 8), (8, 4)), [(1, 4), (1, 4), (1, 4)])
    assert not holds(nodes((8, 8), (8, 4)), [(1, 8), (1, 8)])
