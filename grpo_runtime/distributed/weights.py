"""The policy's full weights, one tensor at a time, under the names of the checkpoint on disk.

What a vLLM engine loads after each optimizer step. The hook hides how the policy is held:
* plain or DDP: each parameter as it is;
* FSDP2 (`fully_shard`): each sharded parameter gathered with `full_tensor()`;
* FSDP1: the full parameters summoned (no write-back) for the whole model;
* DeepSpeed ZeRO-3: each partitioned parameter gathered with `deepspeed.zero.GatheredParameters`;
* PEFT (LoRA): the adapter merged into the base weights while they are read, then unmerged.
Gathering is a collective: every process must walk the iterator to its end, even those that load nothing.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch

WRAPPER_PREFIXES = ("_checkpoint_wrapped_module.", "_fsdp_wrapped_module.", "_orig_mod.")


def checkpoint_name(name: str) -> str:
    """The parameter's name in a `save_pretrained` checkpoint: wrapper and PEFT parts removed."""
    for prefix in WRAPPER_PREFIXES:
        name = name.replace(prefix, "")
    name = name.removeprefix("module.").removeprefix("base_model.model.")
    return name.replace(".base_layer.", ".").replace("modules_to_save.default.", "")


def is_adapter_only(name: str) -> bool:
    """LoRA matrices and the copies PEFT keeps of modules it trains: not part of the merged checkpoint."""
    return "lora_" in name or "original_module" in name


def is_peft(model) -> bool:
    return hasattr(model, "merge_adapter") and hasattr(model, "unmerge_adapter")


@contextlib.contextmanager
def gathered(model, accelerator):
    """Everything the model needs to expose full parameters for the whole walk (FSDP1 only; the others gather
    one parameter at a time)."""
    from accelerate.utils import DistributedType

    if (
        accelerator is not None
        and accelerator.distributed_type == DistributedType.FSDP
        and getattr(accelerator.state.fsdp_plugin, "fsdp_version", 1) == 1
    ):
        from torch.distributed.fsdp import FullyShardedDataParallel

        with FullyShardedDataParallel.summon_full_params(model, writeback=False, rank0_only=False):
            yield
    else:
        yield


@contextlib.contextmanager
def full_parameter(param, accelerator):
    """One parameter's full value (ZeRO-3 partitions are gathered, FSDP2 DTensors are materialised)."""
    from accelerate.utils import DistributedType

    if (
        accelerator is not None
        and accelerator.distributed_type == DistributedType.DEEPSPEED
        and hasattr(param, "ds_id")
    ):
        import deepspeed

        with deepspeed.zero.GatheredParameters([param]):
            yield param.data
        return
    if hasattr(param, "full_tensor"):  # a DTensor (FSDP2)
        yield param.full_tensor()
        return
    yield param.data


def parameter_metadata(model) -> list[tuple[str, str, list[int]]]:
    """(checkpoint name, dtype name, full shape) in the order full_named_parameters yields them, read without
    gathering anything (a ZeRO-3 partition keeps its full shape in `ds_shape`, an FSDP2 DTensor in `shape`)."""
    peft, seen, out = is_peft(model), set(), []
    for name, param in model.named_parameters():
        if peft and is_adapter_only(name):
            continue
        name = checkpoint_name(name)
        if name not in seen:
            seen.add(name)
            shape = list(getattr(param, "ds_shape", param.shape))
            out.append((name, str(param.dtype).removeprefix("torch."), shape))
    return out


def full_named_parameters(model, accelerator=None) -> Iterator[tuple[str, torch.Tensor]]:
    """(checkpoint name, full tensor) for every parameter of `model` (the prepared or unwrapped policy); tied
    weights once. Use the values before advancing the iterator: a gathered tensor is released afterwards."""
    peft = is_peft(model)
    with gathered(model, accelerator):
        if peft:
            model.merge_adapter()
        try:
            seen = set()
            for name, param in model.named_parameters():
                if peft and is_adapter_only(name):
                    continue
                name = checkpoint_name(name)
                if name in seen:
                    continue
                seen.add(name)
                with full_parameter(param, accelerator) as value:
                    yield name, value
        finally:
            if peft:
                model.unmerge_adapter()
