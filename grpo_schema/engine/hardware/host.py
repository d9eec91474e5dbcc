"""Host RAM of one node: what the training processes of a node keep in the machine's own memory.

Parts, per node (G = training processes on the node, P = world size):

- offloaded states: DeepSpeed's CPU offload. Optimizer offload moves the fp32 master copy, the fp32 gradient
  partition and the optimizer's moments to the host: (4 + 4 + 4k) bytes per trainable parameter / P on each
  process (k = 2 for Adam: DeepSpeed's estimator's 16 bytes); parameter offload (ZeRO-3) adds the 16-bit
  partition (2 bytes, its 18; 4 in fp32). DeepSpeed's own estimator multiplies these by 1.5
  (additional_buffer_factor); the plan keeps the states themselves, which is what a process measures
  (memprobe: ZeRO-3 with both offloads on 2 CPU processes, tests/hardware/test_host_ram.py) and names the
  estimator's figure. FSDP's CPU offload keeps the sharded weights, gradients and optimizer states on the host.
  With pin_memory (DeepSpeed's offload default in accelerate) they are page-locked: the system cannot swap them.
- model loading peak (phase "loading", at start, never at once with the training states, which come after):
  TRL 1.16 loads with device_map=None under MULTI_GPU and DEEPSPEED, so every process of a node holds the whole
  model in its loaded dtype on the CPU before moving it to its GPU (DeepSpeed's estimator: 4 bytes x N x G
  without zero.Init); under ZeRO-3 zero.Init partitions as it loads (one layer gathered per process: its
  largest_layer x G); one process (device_map "auto"), a quantised model (bitsandbytes quantises on the GPU as
  it loads) and FSDP's cpu_ram_efficient_loading (rank 0 alone) hold less.
- vLLM sleep mode: TRL 1.16 and grpo_runtime call `sleep(level=2)`, which discards the weights and the KV cache
  instead of copying them to the host (level 1 would copy the weights): nothing is kept in RAM for it.
- dataloader workers: each worker is a forked process; an allowance of 0.5 GiB each.
- processes: Python, torch and the CUDA runtime's host side, an allowance of 2 GiB a training process (+1 GiB
  beside a colocated vLLM engine); none when the estimate is of a CPU run's deltas (the probe's measurement).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpo_schema.engine.hardware.memory import GIB, Part, Setup
from grpo_schema.engine.hardware.models import ModelFacts
from grpo_schema.engine.hardware.states_memory import lora_params, optimizer_states

PROCESS_BASE = 2.0 * GIB
VLLM_PROCESS = 1.0 * GIB
WORKER = 0.5 * GIB
DEEPSPEED_BUFFER_FACTOR = 1.5  # deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs' default
HOST_PHASES = ("always", "held", "loading")  # "always": in both the loading and the training phase


@dataclass
class HostEstimate:
    parts: list[Part] = field(default_factory=list)
    processes: int = 1  # training processes on the node
    deepspeed_estimate: float | None = None  # DeepSpeed's own CPU figure for the node, when it has one

    def phase_total(self, phase: str) -> float:
        return sum(p.bytes for p in self.parts if p.phase in (phase, "always"))

    @property
    def peak_phase(self) -> str:
        return "loading" if self.phase_total("loading") > self.phase_total("held") else "held"

    @property
    def total(self) -> float:
        return max(self.phase_total("held"), self.phase_total("loading"))

    def part(self, name: str) -> float:
        return sum(p.bytes for p in self.parts if p.name == name)

    def to_dict(self, capacity: float | None = None) -> dict:
        return {
            "total_bytes": int(self.total),
            "total_gib": round(self.total / GIB, 2),
            "peak_phase": self.peak_phase,
            "processes_per_node": self.processes,
            "parts": [p.to_dict() for p in self.parts],
            "capacity_gib": None if capacity is None else round(capacity / GIB, 2),
            "fits": None if capacity is None else self.total <= capacity,
            "deepspeed_estimate_gib": None
            if self.deepspeed_estimate is None
            else round(self.deepspeed_estimate / GIB, 2),
        }


def offloaded_per_process(model: ModelFacts, s: Setup) -> float:
    """Bytes one process keeps on the host for the offloaded model states."""
    N, P = model.total_params(), max(s.world_size, 1)
    trainable = lora_params(model, s) if s.use_peft else N
    k = optimizer_states(s.optim)
    out = 0.0
    if s.deepspeed:
        if s.offload_optimizer:
            out += (4 + 4 + 4 * k) * trainable / P  # fp32 master, fp32 gradient partition, moments
        if s.offload_params and s.strategy == "zero3":
            out += (2 if s.compute_bytes == 2 else s.weight_bytes) * N / P
    elif s.strategy in ("fsdp", "fsdp_grad_op") and s.offload_params:
        wb = s.weight_bytes
        out += wb * N / P + (wb + k * wb) * trainable / P
    return out


def estimate_host(model: ModelFacts, s: Setup, processes: int, nodes: int = 1, workers: int = 0) -> HostEstimate:
    """Host RAM of one node with `processes` training processes."""
    est = HostEstimate(processes=processes)
    add = lambda name, value, phase, note="": est.parts.append(Part(name, max(float(value), 0.0), phase, note))  # noqa
    N = model.total_params()
    offloaded = offloaded_per_process(model, s)
    if offloaded:
        add(
            "offloaded states",
            offloaded * processes,
            "held",
            f"{offloaded / GIB:.2f} GiB a process x {processes}: "
            + ("optimizer states, fp32 master and gradients" if s.offload_optimizer else "")
            + (" and " if s.offload_optimizer and s.offload_params else "")
            + ("parameters" if s.offload_params else "")
            + " on the CPU (pinned)",
        )
        if s.deepspeed and not s.use_peft:
            per = (18 if s.offload_params and s.strategy == "zero3" else 16) if s.offload_optimizer else 2
            est.deepspeed_estimate = N * per / nodes * DEEPSPEED_BUFFER_FACTOR
    wb = s.weight_bytes
    if s.quantization or processes * nodes == 1:
        loading, how = model.largest_layer_params() * wb * processes, "straight to the GPU, a layer at a time"
    elif s.strategy == "zero3":
        loading, how = model.largest_layer_params() * wb * processes, "zero.Init: partitioned while loading"
    elif s.strategy in ("fsdp", "fsdp_grad_op"):
        loading, how = N * wb, "rank 0 loads, the others wait (cpu_ram_efficient_loading)"
    else:
        loading, how = N * wb * processes, "device_map=None: each process loads the whole model on the CPU"
    add("model loading", loading, "loading", how)
    if s.use_vllm and s.vllm_sleep:
        add("vllm sleep", 0, "held", "sleep(level=2) discards the weights and KV cache: nothing copied to RAM")
    if workers:
        add(
            "dataloader workers",
            WORKER * workers * processes,
            "held",
            f"{workers} worker{'s' if workers != 1 else ''} a process (an allowance of 0.5 GiB each)",
        )
    if s.device == "gpu":
        base = (PROCESS_BASE + (VLLM_PROCESS if s.use_vllm and s.vllm_mode == "colocate" else 0)) * processes
        add(
            "processes",
            base,
            "always",
            f"{processes} training process{'es' if processes != 1 else ''}: Python, torch, CUDA's host side "
            "(an allowance)",
        )
    return est
