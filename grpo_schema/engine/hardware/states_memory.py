"""The model states per GPU under each strategy, and what a strategy holds beside them, in bytes.

Weights, gradients and optimizer states follow DeepSpeed's own accounting for ZeRO (mixed precision: 2-byte weights,
fp32 master copy and Adam moments sharded over the world size), torch's for plain data parallel (states in the
weights' dtype) and FSDP's (everything sharded, one wrapped layer gathered); LoRA's adapters are counted apart.
Beside the states, DeepSpeed ZeRO-3 keeps parameters gathered and a gradient reduction bucket, and plain DDP a
second copy of the gradients in its communication buckets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grpo_schema.engine.hardware import quantization
from grpo_schema.engine.hardware.activations import lora_target_names
from grpo_schema.engine.hardware.models import ModelFacts

if TYPE_CHECKING:
    from grpo_schema.engine.hardware.memory import Setup

OPTIMIZER_STATES = {"sgd": 0, "adafactor": 0, "adagrad": 1, "rmsprop": 1, "lion_32bit": 1, "lion_8bit": 0.25}


def lora_params(model: ModelFacts, setup: Setup) -> int:
    """Adapter parameters: r x (in + out) per targeted linear, per layer (MLP targets once per expert)."""
    targets = lora_target_names(setup)
    shapes = model.linear_shapes()
    experts = max(model.num_experts, 1)
    per_layer = sum(
        setup.lora_r
        * (shapes[t][0] + shapes[t][1])
        * (experts if t.endswith(("gate_proj", "up_proj", "down_proj")) else 1)
        for t in targets
        if t in shapes
    )
    head = setup.lora_r * (model.hidden_size + model.vocab_size) if "lm_head" in targets else 0
    return model.num_layers * per_layer + head


def optimizer_states(optim: str) -> float:
    """States per trainable parameter, in units of the state dtype (8-bit optimizers: a quarter)."""
    name = optim.lower()
    if "8bit" in name:
        return 0.5
    return next((v for k, v in OPTIMIZER_STATES.items() if name.startswith(k)), 2)


def model_states(model: ModelFacts, s: Setup) -> tuple[float, float, float, str]:
    """(weights, gradients, optimizer states, note) per GPU for the policy being trained."""
    N, P, largest = model.total_params(), s.world_size, model.largest_layer_params()
    trainable = 0 if s.use_peft else N
    k = optimizer_states(s.optim)
    if s.quantization:  # QLoRA: the frozen base at bitsandbytes' storage, the rest in the loaded dtype
        stored = quantization.weight_bytes(model, s.quantization, s.nested_quant, s.weight_bytes)
        what = quantization.describe(s.quantization, s.nested_quant)
        if s.strategy in ("zero3", "fsdp"):
            return stored / P + s.weight_bytes * largest, 0, 0, f"{what}; sharded, one layer gathered"
        return stored, 0, 0, f"{what}; embeddings, lm_head and norms in {s.weight_bytes}-byte numbers"
    if s.deepspeed and (s.compute_bytes == 2):  # DeepSpeed mixed precision: fp32 master + moments in the optimizer
        if s.strategy == "zero3":
            weights = (0 if s.offload_params else 2 * N / P) + 2 * largest
            grads = 2 * largest + (0 if s.offload_optimizer else 4 * trainable / P)
            optim = 0 if s.offload_optimizer else (4 + 4 * k) * trainable / P
            return weights, grads, optim, "ZeRO-3: weights, gradients and optimizer states sharded; one layer gathered"
        if s.offload_optimizer:
            return 2 * N, 0, 0, f"ZeRO-{s.strategy[-1]} with the optimizer offloaded to the CPU"
        # ZeRO-2 shards the 16-bit gradients too (DeepSpeed 0.19: 2N + 18N/P in all); ZeRO-1 keeps them whole
        grads = (2 * trainable / P if s.strategy == "zero2" else 2 * trainable) + 4 * trainable / P
        return 2 * N, grads, (4 + 4 * k) * trainable / P, f"ZeRO-{s.strategy[-1]}: fp32 master and moments sharded"
    wb = s.weight_bytes
    if s.strategy == "zero3":
        # DeepSpeed with weights already in the optimizer's dtype keeps no separate master copy (stage3.py: "we
        # don't need another copy of the weights"), but it holds two gradient partitions: the flat buffer the
        # reduce-scatter writes (grad_partitions_flat_buffer) and the one the optimizer reads (gradient_buffer)
        weights = (0 if s.offload_params else wb * N / P) + wb * largest
        if s.offload_optimizer:  # the master copy, one gradient partition and the moments go to the host
            return (
                weights,
                4 * trainable / P,
                0,
                "ZeRO-3: sharded, optimizer offloaded; one gradient partition stays on the device",
            )
        return (
            weights,
            2 * 4 * trainable / P,
            k * 4 * trainable / P,
            "ZeRO-3: sharded, no master copy in full precision; gradients partitioned twice",
        )
    if s.strategy == "fsdp":
        weights = wb * N / P + wb * largest
        return weights, wb * trainable / P, k * wb * trainable / P, "fully sharded; one layer gathered"
    if s.strategy in ("zero1", "zero2", "fsdp_grad_op"):
        grads = wb * trainable / P if s.strategy != "zero1" else wb * trainable
        return wb * N, grads, k * wb * trainable / P, "optimizer states sharded"
    return wb * N, wb * trainable, k * wb * trainable, "replicated on every GPU (data parallel)"


def zero3_buffers(model: ModelFacts, s: Setup, add) -> None:
    """What DeepSpeed ZeRO-3 holds besides the model states of its own estimate (measured: memprobe, ZeRO-3 on 2
    CPU processes).

    * live parameters: a module's gathered weights are released after its forward only when their next use is
      more than stage3_max_reuse_distance away or more than stage3_max_live_parameters are gathered; at the
      defaults (1e9 both) every parameter of a model under 1e9 stays gathered from its first use to the end of
      the backward. The model states already count the largest layer gathered.
    * the reduction bucket (contiguous_gradients): reduce_bucket_size elements in the gradients' dtype, allocated
      at start on a GPU; on the CPU only the pages the gradients pass through (at most the model) are resident."""
    N = model.total_params()
    param_bytes = 2 if s.compute_bytes == 2 else s.weight_bytes
    live = max(min(N, s.max_live_parameters) - model.largest_layer_params(), 0)
    add(
        "live parameters",
        param_bytes * live,
        "training",
        f"ZeRO-3 keeps up to stage3_max_live_parameters ({s.max_live_parameters:.0e}) gathered through the step",
    )
    if s.use_peft:
        return
    size = s.reduce_bucket_size or model.hidden_size**2  # 0: a DeepSpeed JSON's "auto", hidden_size squared
    bucket = size if s.device == "gpu" else min(size, N)
    add(
        "reduce bucket",
        param_bytes * bucket,
        "held",
        f"ZeRO-3's gradient reduction bucket (reduce_bucket_size {size:.0e} elements)",
    )


def ddp_buckets(model: ModelFacts, s: Setup) -> float:
    """DDP's reducer copies every gradient into flat buckets (ddp_bucket_cap_mb each; together all of them) unless
    gradient_as_bucket_view makes the gradients views of the buckets. Only plain DDP on more than one process."""
    if s.strategy != "ddp" or s.world_size <= 1 or s.gradient_as_bucket_view:
        return 0.0
    if s.use_peft:
        return 4 * lora_params(model, s)
    return s.weight_bytes * model.total_params()
