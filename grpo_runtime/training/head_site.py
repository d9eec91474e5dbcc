"""Where and with which weight the chunked LM head (training/lm_head.py) runs, so that it reproduces the model's
own head wherever the full-logits path would have run it.

Which weight. The module the model's forward would call for its logits, resolved through peft's wrappers:
* a plain `nn.Linear` (exact type: bitsandbytes' quantised layers subclass it and keep the full path);
* peft `ModulesToSaveWrapper` (modules_to_save on lm_head): the copy its forward would call (the active adapter's,
  or the original module when adapters are disabled or the active one has no copy);
* peft LoRA `Linear` on lm_head: the effective weight W + sum_a scale_a * B_a @ A_a (and bias b + scale_a * b_B when
  lora_bias), built once per call as a differentiable tensor, so A and B receive their gradients through it (one
  [V, H] tensor, in the wider of the base's and the adapter's dtypes, kept from the forward to the backward). peft
  computes base(x) + B(A(dropout(x))) * scale: that is x @ W_eff.T only while the dropout is the identity (p = 0,
  or the module in eval mode); with an active dropout or a DoRA / other LoRA variant the full-logits path is kept.
  With the adapters disabled (the reference policy under PEFT) or merged, peft calls the base layer alone: so does
  the chunked head (disabled while merged, where peft's forward unmerges first, keeps the full path).

Where. The weight must be whole while the head runs and its gradient must reach the sharding framework's
reduction as the full path's does:
* DeepSpeed ZeRO-3: the head module itself is called, with its forward replaced for that one call by the chunked
  head. DeepSpeed's module hooks then do what they do for the model's own lm_head call: gather the weight before
  the forward, gather it again before the backward (the pre-backward function on the outputs) and release it after
  (the post-backward function on the input); the full [V, H] gradient the backward returns goes to the
  parameter's AccumulateGrad, whose post-accumulate-grad hook is where DeepSpeed reduces and partitions it. The
  call is made inside the backbone's forward hook, i.e. inside the model's forward, so it sits at the same place in
  the module order DeepSpeed records for prefetching every step. Tied embeddings share one parameter and one
  gradient hook, as in the full path.
* FSDP2 (fully_shard): the root's parameters (embeddings, final norm, lm_head) are whole only between the root's
  pre- and post-forward. The head runs in a method of the root registered with `register_fsdp_forward_method`
  (torch's public hook for extra forward methods): FSDP2 unshards the root's parameters before it, reshards after
  it, registers its pre-backward hook (which unshards them again) on its outputs, and the gradient accumulates in
  the unsharded parameter's .grad, which FSDP2's root post-backward reduce-scatters with its own divide factor,
  reduce dtype and no_sync accumulation, exactly as for the model's own lm_head call. The method takes no tensor
  arguments (FSDP2 would otherwise register its post-backward on them and reduce the root's gradients before the
  embedding's arrived) and its outputs are read from before FSDP2's output_dtype cast.
* modules_to_save on a sharded lm_head: the active copy is a plain nn.Linear with ZeRO-3 hooks of its own, or
  among the FSDP2 root's parameters, so it takes the path of a plain head.
* LoRA on lm_head under ZeRO-3 or FSDP2 keeps the full-logits path: under ZeRO-3 its base, A and B weights are
  gathered by three modules' hooks, none of which the chunked head's call would run; not built for FSDP2 either,
  to keep one rule for both (nothing here exercises it). So does a head that is an FSDP2 unit of its own.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class Head:
    """The module the model's head call resolves to and how its (weight, bias) is read."""

    module: torch.nn.Module  # the nn.Linear to call (ZeRO-3) / read, or the peft LoRA Linear
    lora: bool = False

    def weight_and_bias(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Read when the weights are whole (inside the gather / FSDP2 unshard)."""
        if not self.lora:
            return self.module.weight, self.module.bias
        return _lora_weight_and_bias(self.module)


def resolve(head: torch.nn.Module | None) -> Head | None:
    """The head the model's forward would apply, or None when the chunked head cannot reproduce it."""
    if head is None:
        return None
    if type(head) is torch.nn.Linear:
        return Head(head)
    wrapped = _modules_to_save_target(head)
    if wrapped is not None:
        return Head(wrapped) if type(wrapped) is torch.nn.Linear else None
    if not _lora_linear(head):
        return None
    base = head.get_base_layer()
    if head.disable_adapters or head.merged:  # peft's forward: the base layer alone
        return Head(base) if type(base) is torch.nn.Linear and not (head.disable_adapters and head.merged) else None
    return Head(head, lora=True) if _plain_lora(head) else None


def _modules_to_save_target(head) -> torch.nn.Module | None:
    try:
        from peft.utils.other import ModulesToSaveWrapper
    except ImportError:
        return None
    if not isinstance(head, ModulesToSaveWrapper):
        return None
    # the branch of ModulesToSaveWrapper.forward taken without adapter_names
    active = list(head.active_adapters)
    if head.disable_adapters or not active or any(name not in head._adapters for name in active):
        return head.original_module
    return head.modules_to_save[active[0]]


def _lora_linear(head) -> bool:
    try:
        from peft.tuners.lora import Linear as LoraLinear
    except ImportError:
        return False
    return type(head) is LoraLinear


def _plain_lora(head) -> bool:
    """Active adapters whose forward is x @ (B A).T * scale on a plain nn.Linear."""
    if type(head.get_base_layer()) is not torch.nn.Linear or getattr(head, "fan_in_fan_out", False):
        return False
    for name in _active_lora(head):
        if name in getattr(head, "lora_variant", {}):  # DoRA and other variants change the forward
            return False
        dropout = head.lora_dropout[name]
        if not (
            isinstance(dropout, torch.nn.Identity)
            or (isinstance(dropout, torch.nn.Dropout) and (dropout.p == 0.0 or not dropout.training))
        ):
            return False  # B(A(dropout(x))) is not x @ (B A).T
    return True


def _active_lora(head) -> list[str]:
    return [name for name in head.active_adapters if name in head.lora_A.keys()]


def _lora_weight_and_bias(head) -> tuple[torch.Tensor, torch.Tensor | None]:
    """W + sum scale * B @ A ([V, H]) in the widest dtype among them (peft runs an fp32 adapter of a bf16 base in
    fp32), and the bias with lora_bias' scaled B bias."""
    base = head.get_base_layer()
    names = _active_lora(head)
    dtype = base.weight.dtype
    for name in names:
        dtype = torch.promote_types(dtype, head.lora_A[name].weight.dtype)
    weight = base.weight.to(dtype)
    bias = None if base.bias is None else base.bias.to(dtype)
    for name in names:
        a, b, scale = head.lora_A[name].weight, head.lora_B[name].weight, head.scaling[name]
        weight = weight + (b.to(dtype) @ a.to(dtype)) * scale  # [V, r] @ [r, H]
        b_bias = head.lora_B[name].bias
        if b_bias is not None:
            bias = (b_bias.to(dtype) * scale) if bias is None else bias + b_bias.to(dtype) * scale
    return weight, bias


# -- where ---------------------------------------------------------------------------------------------------------


def zero3(head: Head) -> bool:
    """The head's weight is a ZeRO-3 partitioned parameter."""
    return any(hasattr(p, "ds_id") for p in head.module.parameters())


def fsdp_root(model) -> torch.nn.Module | None:
    """The FSDP2 root module when the model is sharded with fully_shard, else None."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # a torch without FSDP2
        return None
    return model if isinstance(model, FSDPModule) else None


def fsdp_elsewhere(model, base, head: torch.nn.Module) -> bool:
    """FSDP2 is in use but not in the one arrangement handled here (the head's parameters in the root's group):
    the head is its own FSDP unit, or only inner modules are sharded (the root is not an FSDPModule)."""
    try:
        from torch.distributed.fsdp import FSDPModule
        from torch.distributed.tensor import DTensor
    except ImportError:
        return False
    if any(isinstance(m, FSDPModule) for m in head.modules()):
        return True
    if fsdp_root(model) is None:
        return any(isinstance(m, FSDPModule) for m in base.modules()) or any(
            isinstance(p, DTensor) for p in head.parameters()
        )
    return False


def call_as_module(module: torch.nn.Module, compute: Callable, hidden: torch.Tensor):
    """module(hidden) with `compute(hidden)` as its forward for this one call, so the module's hooks (ZeRO-3's
    gather, pre-backward gather and post-backward release) wrap the chunked head as they wrap its own forward."""
    own = module.__dict__.get("forward")  # cast_lm_head_to_fp32 gives the head an instance forward: put it back
    module.forward = compute  # an instance attribute shadows the class's forward
    try:
        return module(hidden)
    finally:
        if own is None:
            del module.forward
        else:
            module.forward = own


_METHOD = "_grpo_chunked_head"


def _run(self, compute):
    return compute()


def call_in_fsdp_root(root: torch.nn.Module, compute: Callable):
    """compute() between the FSDP2 root's pre- and post-forward (see the module docstring); returns its outputs
    as compute made them, the ones FSDP2 hooked for the backward."""
    from torch.distributed.fsdp import register_fsdp_forward_method

    if _METHOD not in root.__dict__:
        setattr(root, _METHOD, types.MethodType(_run, root))
        register_fsdp_forward_method(root, _METHOD)
    made = {}

    def run():
        made["out"] = compute()
        return made["out"]

    getattr(root, _METHOD)(run)  # FSDP2 may return copies cast to its output_dtype: those are not used
    return made["out"]
