"""Per-GPU memory of a GRPO run, part by part, in bytes.

Each part is a formula over the model's architecture and the run's settings (`Setup`), written from what the
training code keeps alive (see grpo_runtime.memprobe, which measures the same parts of grpo_runtime's step):

- model states follow DeepSpeed's own accounting for ZeRO (mixed precision: 2-byte weights, fp32 master copy and
  Adam moments sharded over the world size), torch's for plain data parallel (states in the weights' dtype) and
  FSDP's (everything sharded, one wrapped layer gathered): `states_memory.py`, with what ZeRO-3 keeps gathered;
- activations are the tensors each decoder layer saves for backward, per token (RMSNorm keeps fp32 copies; the
  attention keeps q, k, v, its output and its input to o_proj; the gated MLP keeps four intermediate-wide
  tensors); with activation checkpointing only each layer's input, plus one layer recomputed in backward;
- the logits head follows the engine that runs the config (`Setup.engine`): TRL 1.16's fused, chunked LM head or
  grpo_runtime's chunked head, neither ever holding the full logits (`head_memory.py`, docs/planner.md);
- plain DDP keeps a second copy of the gradients in its communication buckets (accelerate's default,
  gradient_as_bucket_view off; `states_memory.py`); under DeepSpeed bf16 the module itself is cast, so no
  autocast copies exist;
- phases do not overlap: the per-GPU peak is the parts held throughout plus the largest of training, generation
  (KV cache, weights gathered under ZeRO-3: `generation_memory.py`) and scoring (the no-grad old/reference
  log-prob pass).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpo_schema.engine.hardware import quantization
from grpo_schema.engine.hardware.activations import (
    autocast_forward,
    layer_bytes_per_token,
    lora_adapter_bytes,
    trunk_bytes,
)
from grpo_schema.engine.hardware.generation_memory import generation_parts
from grpo_schema.engine.hardware.head_memory import logits
from grpo_schema.engine.hardware.models import ModelFacts
from grpo_schema.engine.hardware.states_memory import (
    ddp_buckets,
    lora_params,
    model_states,
    optimizer_states,
    zero3_buffers,
)

GIB = 1024**3
FRAMEWORK_BASE = 1.0 * GIB  # CUDA context, cuBLAS/cuDNN workspaces, the allocator's first blocks
FRAMEWORK_COMM = 0.5 * GIB  # NCCL buffers when there is more than one process
FRAGMENTATION = 0.05  # the caching allocator rounds and fragments: a share of the tensors' peak
# "update": the end of a backward that accumulates nothing (gradient_accumulation_steps 1, outside DeepSpeed): every
# gradient is built and every saved tensor freed, for autograd frees each layer's tensors as it builds its gradients
PHASES = ("held", "training", "update", "generation", "scoring")
ENGINES = ("trl", "grpo_runtime")


@dataclass(frozen=True)
class Setup:
    """The settings the estimate reads, resolved from a config and a hardware declaration."""

    world_size: int
    micro_batch: int  # per_device_train_batch_size
    prompt_length: int
    completion_length: int
    generation_rows: int  # completions one process generates at once (its share of generation_batch_size)
    gradient_accumulation_steps: int = 1
    weight_bytes: int = 2  # the dtype the weights are loaded in
    compute_bytes: int = 2  # the activations' dtype (bf16/fp16 autocast or the weights' dtype)
    autocast: bool = False  # fp32 weights with bf16/fp16 autocast: cast copies of the weights are cached
    strategy: str = "ddp"  # ddp | zero1 | zero2 | zero3 | fsdp | fsdp_grad_op
    offload_optimizer: bool = False
    offload_params: bool = False
    optim: str = "adamw_torch_fused"
    activation_checkpointing: bool = True
    attention: str = "sdpa"  # sdpa | flash_attention_2 | eager | ...
    # bf16/fp16 on: both engines run the forward under accelerator.autocast() (DeepSpeed casts the module instead)
    mixed_precision: bool = False
    entropy: bool = True  # the entropy of each token's distribution is computed (TRL logs it)
    reference: bool = False  # beta != 0: reference log-probs are needed
    old_logprobs: bool = False
    use_peft: bool = False
    lora_r: int = 16
    lora_targets: tuple[str, ...] | None = None
    lora_dropout: float = 0.05  # TRL's default; > 0 makes peft keep a dropped copy of each adapted input
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_memory_utilization: float = 0.3
    vllm_max_model_length: int | None = None
    vllm_tensor_parallel_size: int = 1
    vllm_sleep: bool = False
    # On a CPU vLLM sizes its KV cache by VLLM_CPU_KVCACHE_SPACE (GiB), not by a share of the device: grpo_runtime
    # sets it to 1 unless the environment does (generation/vllm_colocate.py), vLLM's own default is 4.
    vllm_cpu_kv_cache_gib: float = 1.0
    liger_loss: bool = False
    lm_head_fp32: bool = False
    # bitsandbytes' quantised base (load_in_4bit: "nf4" | "fp4", load_in_8bit: "int8"; None: not quantised) and
    # nested quantisation of the 4-bit constants (use_bnb_nested_quant); grpo_schema.engine.hardware.quantization
    quantization: str | None = None
    nested_quant: bool = False
    device: str = "gpu"  # "cpu": no framework allowance (the runtime's own measurement)
    engine: str = "trl"  # trl | grpo_runtime: whose LM head and DDP settings
    # DeepSpeed ZeRO-3's defaults (deepspeed.runtime.zero.config, also what accelerate's bundled zero3 config and
    # TRL's leave in place): the gradient reduction bucket, in elements, and the parameters kept gathered
    # (stage3_max_live_parameters, with stage3_max_reuse_distance at its default 1e9 every parameter qualifies).
    reduce_bucket_size: int = 500_000_000  # 0: "auto" in a DeepSpeed JSON (transformers: hidden_size squared)
    max_live_parameters: int = 1_000_000_000
    # DDP's buckets are the gradients (no second copy). Neither engine sets it: transformers' Trainer passes
    # ddp_bucket_cap_mb (and broadcast_buffers, find_unused_parameters) to accelerate's DistributedDataParallelKwargs,
    # grpo_runtime the same keys (setup.new_accelerator), and the kwargs' default is False.
    gradient_as_bucket_view: bool = False

    @property
    def sequence_length(self) -> int:
        return self.prompt_length + self.completion_length

    @property
    def deepspeed(self) -> bool:
        return self.strategy.startswith("zero")


@dataclass(frozen=True)
class Part:
    name: str
    bytes: float
    phase: str  # held | training | generation | scoring
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "bytes": int(self.bytes),
            "gib": round(self.bytes / GIB, 3),
            "phase": self.phase,
            "note": self.note,
        }


@dataclass
class MemoryEstimate:
    parts: list[Part] = field(default_factory=list)
    peak_phase: str = "training"
    kv_cache_tokens: int | None = None  # vLLM colocate: tokens its KV cache holds (per vLLM instance)
    kv_cache_tokens_needed: int | None = None  # tokens one generation batch needs there
    vllm_weights: float = 0.0

    def phase_total(self, phase: str) -> float:
        return sum(p.bytes for p in self.parts if p.phase == phase)

    @property
    def total(self) -> float:
        return self.phase_total("held") + self.phase_total(self.peak_phase)

    def tensors_total(self) -> float:
        """The peak without the framework allowance: what the tensors alone certainly need."""
        return self.total - sum(p.bytes for p in self.parts if p.name == "framework")

    def at_peak(self) -> list[Part]:
        return [p for p in self.parts if p.phase in ("held", self.peak_phase) and p.bytes > 0]

    def part(self, name: str) -> float:
        return sum(p.bytes for p in self.parts if p.name == name)


def layer_activation_bytes(model: ModelFacts, s: Setup, tokens: int) -> float:
    """Bytes one decoder layer saves for backward over `tokens` tokens (grpo_schema.engine.hardware.activations)."""
    return tokens * layer_bytes_per_token(model, s)


def activations(model: ModelFacts, s: Setup, head: float = 0.0) -> float:
    """The trunk's saved tensors at the step's peak; `head`: the LM head's buffers, freed before a checkpointed
    layer is recomputed."""
    return trunk_bytes(model, s, s.micro_batch * s.sequence_length, head)


def autocast_copies(model: ModelFacts, s: Setup) -> float:
    """Half-precision copies of fp32 parameters under bf16/fp16 autocast, kept for the backward: the fp32 weights
    (sharded under ZeRO-3/FSDP; a quantised projection is dequantised by bitsandbytes instead) and LoRA's fp32
    adapters on a 16-bit base. DeepSpeed's bf16 engine casts the module itself: none."""
    if not autocast_forward(s):
        return 0.0
    copies = 0.0
    if s.autocast:
        cast = model.total_params() - (quantization.quantized_params(model) if s.quantization else 0)
        copies += 2 * cast / (s.world_size if s.strategy in ("zero3", "fsdp") else 1)
    if s.use_peft and lora_adapter_bytes(s) == 4:
        copies += 2 * lora_params(model, s)
    return copies


def estimate_memory(model: ModelFacts, s: Setup, capacity: float | None = None) -> MemoryEstimate:
    """Every part per GPU. `capacity` (bytes per GPU) sizes vLLM's colocated share and its KV cache."""
    est = MemoryEstimate()
    add = lambda name, value, phase, note="": est.parts.append(Part(name, max(float(value), 0.0), phase, note))  # noqa
    held_grads = _states(model, s, add)
    if s.use_peft:
        _lora(model, s, add)
    if s.quantization:
        add(
            "dequantised weight",
            quantization.dequantized_transient(model, s.compute_bytes),
            "held",
            "each quantised layer's forward and backward rebuild its [out, in] weight in the compute dtype, "
            "one layer at a time (the largest)",
        )
    if s.reference and not s.use_peft:
        _reference(model, s, add)
    _training_step(model, s, held_grads, add)
    if s.strategy == "zero3":
        zero3_buffers(model, s, add)
    _copies(model, s, add)
    if s.reference or s.old_logprobs:
        _scoring(model, s, add)
    generation_parts(model, s, est, capacity, add)
    if s.device == "gpu":
        tensors = est.phase_total("held") + max(est.phase_total(p) for p in PHASES[1:])
        add(
            "framework",
            FRAMEWORK_BASE + (FRAMEWORK_COMM if s.world_size > 1 else 0) + FRAGMENTATION * tensors,
            "held",
            "CUDA context, NCCL buffers and allocator fragmentation (an allowance)",
        )
    est.peak_phase = max(PHASES[1:], key=est.phase_total)
    return est


def _states(model: ModelFacts, s: Setup, add) -> bool:
    """The policy's weights, gradients and optimizer states; whether the gradients are held between micro-steps."""
    weights, grads, optim, note = model_states(model, s)
    add("weights", weights, "held", note)
    held_grads = s.gradient_accumulation_steps > 1 or s.deepspeed
    add(
        "gradients",
        grads,
        "held" if held_grads else "update",
        "kept across the accumulation window"
        if held_grads
        else "built as the backward frees the saved tensors: at its end, not beside them",
    )
    add("optimizer", optim, "held", f"{s.optim}" + (" (offloaded to CPU)" if s.offload_optimizer else ""))
    return held_grads


def _lora(model: ModelFacts, s: Setup, add) -> None:
    """LoRA's adapters with their gradients and optimizer states."""
    adapters = lora_params(model, s)
    if s.quantization:  # both engines cast the adapters of a quantised base to bf16 (the QLoRA paper's choice)
        states = 4 * optimizer_states(s.optim) if "8bit" in s.optim.lower() else 2 * optimizer_states(s.optim)
        add(
            "lora",
            adapters * (2 + 2 + states),
            "held",
            f"{adapters / 1e6:.1f}M adapter parameters (bf16 on a quantised base: weights, gradients, states)",
        )
    else:
        add(
            "lora",
            adapters * (4 + 4 + 4 * optimizer_states(s.optim)),
            "held",
            f"{adapters / 1e6:.1f}M adapter parameters (fp32 weights, gradients and optimizer states)",
        )


def _reference(model: ModelFacts, s: Setup, add) -> None:
    """The frozen reference model beside the policy (beta != 0, without LoRA)."""
    ref_bytes = 2 if s.deepspeed and s.compute_bytes == 2 else s.weight_bytes
    # Under ZeRO-3 both engines partition the reference (a DeepSpeed engine without an optimizer). Under FSDP
    # TRL shards it too, while grpo_runtime keeps a whole frozen copy on every process.
    sharded = s.strategy == "zero3" or (s.strategy == "fsdp" and s.engine == "trl")
    add(
        "reference",
        ref_bytes * model.total_params() / (s.world_size if sharded else 1),
        "held",
        "a frozen copy of the policy for the KL term (beta != 0)"
        + (", whole on every process" if s.strategy == "fsdp" and not sharded else ""),
    )


def _training_step(model: ModelFacts, s: Setup, held_grads: bool, add) -> None:
    """The training step's peak: the trunk's saved tensors and the LM head's buffers."""
    head = logits(model, s, s.micro_batch, grad=True)
    # Accumulating into held gradients, backward first builds each parameter's new gradient: the vocabulary
    # matrix's is the largest such transient, and with a large vocabulary it can exceed the logits' buffers.
    accumulating = held_grads and not s.use_peft and not s.deepspeed
    transient = model.embedding_params() * s.weight_bytes if accumulating else 0
    add(
        "activations",
        activations(model, s, max(head, transient)),
        "training",
        "checkpointed: each layer's input, and the layer recomputed in the backward where it exceeds the LM "
        "head's buffers (freed by then)"
        if s.activation_checkpointing
        else "every layer's saved tensors",
    )
    add(
        "logits",
        max(head, transient),
        "training",
        f"{s.engine} chunked LM head over {s.micro_batch} x {s.completion_length} tokens (never the full logits)"
        + (" (here the vocabulary matrix's new gradient is larger)" if transient > head else ""),
    )


def _copies(model: ModelFacts, s: Setup, add) -> None:
    """Second copies the frameworks make: DDP's gradient buckets and autocast's half-precision weights."""
    buckets = ddp_buckets(model, s)
    if buckets:
        add(
            "ddp buckets",
            buckets,
            "held",
            "DDP's gradient buckets: a second copy of the gradients "
            "(gradient_as_bucket_view off, accelerate's default; ddp_bucket_cap_mb sizes each, not the total)",
        )
    copies = autocast_copies(model, s)
    if copies:
        add(
            "autocast copies",
            copies,
            "training",
            "bf16 copies of fp32 weights (and of fp32 LoRA adapters) that "
            "autocast makes in the forward pass and the backward keeps",
        )


def _scoring(model: ModelFacts, s: Setup, add) -> None:
    """The no-grad log-prob pass for the old and reference log-probs."""
    one_layer = layer_activation_bytes(model, s, s.micro_batch * s.sequence_length)
    # a no-grad forward frees each layer's intermediates before the next: the trunk's transient and the head's
    # tiles never coexist (measured: batch 32 x 64 tokens, the sum over-counted by a fifth)
    # the old log-probs come from the policy (adapters on); a LoRA run's reference from it with them off
    adapters = s.old_logprobs or not s.use_peft
    add(
        "log-prob pass",
        max(logits(model, s, s.micro_batch, grad=False, adapters=adapters), one_layer / 4),
        "scoring",
        "no-grad forward for old/reference log-probs, per_device_train_batch_size rows at a time",
    )
