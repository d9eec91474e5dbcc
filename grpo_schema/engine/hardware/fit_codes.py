"""The H codes of the memory and time plan (`grpo plan`, `grpo validate --hardware`), and the hint that says no
edit of the file makes a config fit."""

from __future__ import annotations

from grpo_schema.engine.codes import declare

H_NO_FIT = declare(
    "GRPO-H001",
    "error",
    "does not fit in GPU memory",
    "The per-GPU tensors alone (weights, gradients, optimizer states, activations, logits, reference "
    "model, vLLM's share), without any allowance for the framework, exceed the declared GPU's memory: "
    "the run stops with an out-of-memory error at its first step. The fix lists the smallest edits "
    "that bring it under, each checked.",
)
H_TIGHT = declare(
    "GRPO-H002",
    "warning",
    "may not fit in GPU memory",
    "The tensors fit, but not with the allowance for the CUDA context, NCCL buffers and allocator "
    "fragmentation: the run is likely to run out of memory.",
)
H_KV_SHORT = declare(
    "GRPO-H003",
    "warning",
    "vLLM's KV cache is smaller than one generation batch",
    "In colocate mode vLLM gets vllm_gpu_memory_utilization of each GPU; after its weights the "
    "rest holds the KV cache. When it holds fewer tokens than the generation batch needs, vLLM "
    "queues sequences and generation takes several rounds.",
)
H_VLLM_NO_ROOM = declare(
    "GRPO-H004",
    "error",
    "vLLM's share cannot hold the model",
    "vllm_gpu_memory_utilization x GPU memory is smaller than vLLM's weights and reserve (or "
    "leaves no room for one full sequence's KV cache): vLLM refuses to start.",
)
H_UNKNOWN_MODEL = declare(
    "GRPO-H005",
    "info",
    "model unknown: no memory estimate",
    "The model is not a local directory, not in the Hub cache and not in the built-in "
    "catalogue. Pass its config.json (--model-config PATH) for an estimate.",
)
H_TOO_FEW_GPUS = declare(
    "GRPO-H007",
    "error",
    "more processes than declared GPUs",
    "The world size (training processes) is larger than the GPUs the hardware declares.",
)
H_BAD_SECTION = declare(
    "GRPO-H008",
    "error",
    "invalid hardware declaration",
    "The `hardware:` section or --hardware value does not name hardware; the message says what is accepted.",
)

NO_FIX_HINT = (
    "no edit of the file (up to 4 together) makes it fit: declare larger GPUs, offload the optimizer "
    "(offload_optimizer in the hardware: section), or train a smaller model"
)
# Under plain DDP there is nothing to offload to (offload is DeepSpeed's): the hint names the strategies that can.
NO_FIX_HINT_DDP = (
    "no edit of the file (up to 4 together) makes it fit: declare larger GPUs, shard the states (a "
    "ZeRO or FSDP launch, where the optimizer can also be offloaded), or train a smaller model"
)


def no_fit_hint(strategy: str) -> str:
    return NO_FIX_HINT_DDP if strategy == "ddp" else NO_FIX_HINT


H_HOST_NO_FIT = declare(
    "GRPO-H010",
    "error",
    "does not fit in host RAM",
    "One node's host RAM (--host-ram, the hardware: section's host_ram_gib, or the node the "
    "spec names) is smaller than what its training processes keep there: the states DeepSpeed "
    "offloads to the CPU, the model as each process loads it, dataloader workers and the "
    "processes themselves. The kernel's OOM killer (or Ray's memory monitor) ends the run.",
)
H_SERVER_GPU = declare(
    "GRPO-H012",
    "error",
    "no GPU left for the vLLM server",
    "With vllm_mode: server, `trl vllm-serve` runs on GPUs of its own (vllm_tensor_parallel_size of "
    "them); the training processes must leave them free. World size plus the server's GPUs is more "
    "than the hardware declares, so the server would share a GPU with a training process, which "
    "neither the plan nor the run expects.",
)
H_LONGEST_PROMPT = declare(
    "GRPO-H011",
    "warning",
    "the longest prompts do not fit",
    "The plan uses the 95th percentile of the dataset's prompt lengths; at its longest prompt "
    "the same step needs more than the GPU has, so the step that draws such a prompt runs out "
    "of memory (TRL 1.16 does not truncate prompts).",
)
H_BAD_ENGINE = declare(
    "GRPO-H009",
    "error",
    "unknown engine",
    "The planner models the engine that runs the config: `trl` (TRL 1.16's GRPOTrainer: `trl grpo`, "
    "`grpo plan`'s default) or `grpo_runtime` (`grpo train`, `grpo launch`, the form).",
)
