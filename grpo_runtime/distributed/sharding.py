"""Sharded training through accelerate: the few places where FSDP2 or DeepSpeed ZeRO differ from plain DDP.

* building the Accelerator's plugins from the config's `fsdp` / `fsdp_config` / `deepspeed` (distributed.py reads
  them), and filling DeepSpeed's "auto" values when the launcher (`accelerate_config: zero3`, `use_deepspeed`)
  brought the plugin;
* a micro-step's backward: DeepSpeed is told where each optimizer step ends and steps itself there; the loop
  scales the loss for accumulation (as for DDP), so DeepSpeed must not scale it again;
* whole-model state for `save_pretrained` and checkpoints: FSDP2 gathers full (unsharded) model and optimizer
  state dicts, keyed by parameter name, so a checkpoint resumes under any number of processes; DeepSpeed writes
  its own per-process optimizer partitions next to the model;
* the frozen reference model (beta != 0): partitioned under ZeRO-3 and run by a DeepSpeed engine of its own,
  mixed with the policy (sync_ref_model) one gathered parameter pair at a time.

Generation needs every weight: under FSDP2 and ZeRO-3 each forward gathers the layers it runs, and transformers'
`generate` keeps every process stepping until all are done (synced_gpus), so processes whose completions end
early still take part in the others' gathers.
"""

from __future__ import annotations

import contextlib
import copy
import os
from pathlib import Path

import torch

from grpo_runtime.distributed.accelerate import deepspeed_config, fill_deepspeed_autos, fsdp_plugin_kwargs

DS_CHECKPOINT = "deepspeed"  # checkpoint-STEP/deepspeed/: DeepSpeed's model and optimizer partitions
DS_TAG = "state"


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def accelerator_plugins(config, plan) -> dict:
    """Accelerator keyword arguments for the config's sharding fields (none with one process)."""
    if world_size() == 1:
        return {}
    if config.deepspeed:
        from accelerate.utils import DeepSpeedPlugin

        from grpo_runtime.common import CannotRun

        try:
            settings = deepspeed_config(config, plan, world_size())
        except ValueError as error:  # a written value that contradicts the run
            raise CannotRun(str(error)) from None
        return {"deepspeed_plugin": DeepSpeedPlugin(hf_ds_config=settings)}
    if config.fsdp or os.environ.get("ACCELERATE_USE_FSDP", "false").lower() == "true":
        from accelerate.utils import FullyShardedDataParallelPlugin

        # without fsdp in the config, the launcher's FSDP_* variables (an accelerate config file) set the plugin
        kwargs = fsdp_plugin_kwargs(config) if config.fsdp else {"fsdp_version": 2}
        return {"fsdp_plugin": FullyShardedDataParallelPlugin(**kwargs)}
    return {}


def deepspeed_requested(config) -> bool:
    return bool(config.deepspeed) or os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true"


def cpu_flag(config) -> bool:
    """accelerate's `cpu` switch. accelerate never starts DeepSpeed with cpu=True, so a DeepSpeed run with
    use_cpu on a machine without an accelerator leaves it off: DeepSpeed then runs on the CPU by itself. Where
    DeepSpeed would take the GPUs, use_cpu cannot be kept and the run is refused."""
    if not (config.use_cpu and deepspeed_requested(config) and world_size() > 1):
        return config.use_cpu
    if torch.cuda.is_available():
        from grpo_runtime.common import CannotRun

        raise CannotRun(
            "use_cpu: true with DeepSpeed: DeepSpeed runs on the GPUs it finds; set use_cpu: false, or "
            "remove deepspeed (and use_deepspeed / accelerate_config) to train on the CPU"
        )
    return False


def shard_on_cpu(accelerator, plugins: dict) -> None:
    """accelerate applies an FSDP plugin only on accelerator devices; on CPU processes (gloo) it would silently run
    plain DDP. torch's fully_shard works on CPU, so the run is switched to accelerate's FSDP path, the same code
    that shards on GPUs."""
    from accelerate.state import PartialState
    from accelerate.utils import DistributedType

    plugin = plugins.get("fsdp_plugin")
    if plugin is not None and accelerator.state.distributed_type == DistributedType.MULTI_CPU:
        accelerator.state.distributed_type = DistributedType.FSDP
        accelerator.state.fsdp_plugin = plugin
        PartialState._shared_state["distributed_type"] = DistributedType.FSDP


def deepspeed_on_cpu(accelerator) -> None:
    """On a machine without an accelerator, accelerate lets DeepSpeed start the process group (gloo) but counts one
    process (it found no backend of its own), so gathers and reductions would expect a world of one. Its counts are
    set from the process group DeepSpeed started."""
    import torch.distributed as dist
    from accelerate.state import PartialState

    if kind(accelerator) != "DEEPSPEED" or not dist.is_initialized():
        return
    if accelerator.num_processes != dist.get_world_size():
        PartialState._shared_state.update(
            num_processes=dist.get_world_size(),
            process_index=dist.get_rank(),
            backend=dist.get_backend(),
            local_process_index=int(os.environ.get("LOCAL_RANK", dist.get_rank())),
        )


def complete_launcher_plugin(accelerator, config, plan) -> None:
    """A DeepSpeed plugin made by the launcher has "auto" batch sizes; fill them from the run, as the config's own
    `deepspeed` settings are."""
    plugin = accelerator.state.deepspeed_plugin if kind(accelerator) == "DEEPSPEED" else None
    if plugin is not None:
        fill_deepspeed_autos(plugin.deepspeed_config, config, plan, world_size())


def kind(accelerator) -> str:
    """accelerate's name of the distributed type in use: NO, MULTI_CPU, MULTI_GPU, FSDP, DEEPSPEED, ..."""
    return (
        accelerator.distributed_type.value
        if hasattr(accelerator.distributed_type, "value")
        else str(accelerator.distributed_type)
    )


def zero_stage(accelerator) -> int | None:
    if kind(accelerator) != "DEEPSPEED":
        return None
    return int(accelerator.state.deepspeed_plugin.deepspeed_config.get("zero_optimization", {}).get("stage", 0))


def describe(accelerator) -> str:
    """The sharding in use, for run_info.json."""
    if kind(accelerator) == "FSDP":
        plugin = accelerator.state.fsdp_plugin
        return f"FSDP{plugin.fsdp_version} (fully_shard, reshard_after_forward={plugin.reshard_after_forward})"
    if kind(accelerator) == "DEEPSPEED":
        return f"DeepSpeed ZeRO-{zero_stage(accelerator)}"
    return "none"


def prepare_reference(accelerator, reference):
    """The frozen reference model, placed for the run's sharding; every process calls this, after the policy has
    been prepared.

    Under ZeRO-3 the reference is partitioned like the policy: it is loaded the way the policy is (transformers
    builds it under zero.Init: accelerate 1.15 keeps transformers' ZeRO-3 switch on whatever zero3_init_flag says,
    so a whole load cannot be had from accelerate's context), and a whole copy on every process would cost the
    memory ZeRO-3 was chosen to save (the planner counts it divided by the processes, as TRL 1.16 holds it).
    Partitioned parameters are empty outside a forward, so the model is handed to a DeepSpeed engine without an
    optimizer: the engine's module hooks gather each layer's parameters before it runs and free them after. The
    module is returned (the loop scores with modules, as it does with the policy); it keeps its engine alive,
    because the engine removes its hooks when it is collected. Elsewhere the reference is a whole copy on the
    process's device, FSDP2 included."""
    if reference is None:
        return None
    if zero_stage(accelerator) != 3:
        return reference.to(accelerator.device)
    import deepspeed

    settings = copy.deepcopy(accelerator.state.deepspeed_plugin.deepspeed_config)
    # nothing to train: an optimizer block (and its CPU offload) would build an optimizer, a scheduler block one
    # with nothing to attach to
    settings.pop("optimizer", None)
    settings.pop("scheduler", None)
    zero = settings["zero_optimization"]
    zero.pop("offload_optimizer", None)
    # tuning values accelerate left "auto" (it fills them from the policy's hidden size in prepare; a model without
    # one keeps them): DeepSpeed's defaults, as these only size communication buckets
    for key in [key for key, value in zero.items() if value == "auto"]:
        del zero[key]
    engine, *_ = deepspeed.initialize(model=reference, config=settings)
    engine.eval()
    module = engine.module
    object.__setattr__(module, "_grpo_reference_engine", engine)  # not registered as a submodule (no cycle)
    return module


def parameter_pairs(reference, policy):
    """(reference parameter, policy parameter), each whole while its pair is in hand, for mixing the policy into
    the reference (sync_ref_model); every process iterates it to the end. Under ZeRO-3 one pair at a time is
    gathered, so a mix never holds more than one whole parameter of each model; what is written into the reference
    parameter on the main process is broadcast and partitioned again when the next pair is taken."""
    for ref_param, param in zip(reference.parameters(), full_parameters(policy), strict=True):
        if not hasattr(ref_param, "ds_id"):
            yield ref_param, param
            continue
        import deepspeed

        with (
            deepspeed.zero.GatheredParameters([param], modifier_rank=None),
            deepspeed.zero.GatheredParameters([ref_param], modifier_rank=0),
        ):
            yield ref_param, param


def accumulating(accelerator, model, last: bool):
    """The context of one micro-step's forward and backward: gradients are reduced on the last micro-step of the
    optimizer step only (DDP no_sync; FSDP2 requires_gradient_sync; DeepSpeed is told in `backward`)."""
    if last or kind(accelerator) == "DEEPSPEED":
        return contextlib.nullcontext()
    return accelerator.no_sync(model)


def backward(accelerator, model, loss: torch.Tensor, last: bool) -> None:
    if kind(accelerator) != "DEEPSPEED":
        accelerator.backward(loss)
        return
    model.set_gradient_accumulation_boundary(last)
    model.backward(loss, scale_wrt_gas=False)  # the loss is already divided by the accumulation steps
    if last:
        model.step()  # clip (gradient_clipping), optimizer step, zero the gradients


def is_fsdp2(model) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def full_model_state(accelerator, model) -> dict | None:
    """The whole model's state dict on the main process (None elsewhere); every process must call it."""
    if is_fsdp2(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        return state if accelerator.is_main_process else None
    if zero_stage(accelerator) == 3:
        import deepspeed

        module = accelerator.unwrap_model(model)
        with deepspeed.zero.GatheredParameters(list(module.parameters()), modifier_rank=None):
            state = (
                {name: tensor.detach().clone().cpu() for name, tensor in module.state_dict().items()}
                if accelerator.is_main_process
                else None
            )
        return state
    return None  # plain models: save_pretrained reads their own state dict


def save_model(accelerator, model, directory: Path) -> None:
    """save_pretrained of the whole policy (every process calls this; the main process writes)."""
    state = full_model_state(accelerator, model)
    if accelerator.is_main_process:
        accelerator.unwrap_model(model).save_pretrained(directory, state_dict=state)


def save_training_state(accelerator, model, optimizer, directory: Path) -> None:
    """The optimizer state in a checkpoint (every process calls this)."""
    if kind(accelerator) == "DEEPSPEED":
        model.save_checkpoint(str(directory / DS_CHECKPOINT), tag=DS_TAG, save_latest=False)
        return
    if is_fsdp2(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

        state = get_optimizer_state_dict(
            model,
            optimizer.optimizer if hasattr(optimizer, "optimizer") else optimizer,
            options=StateDictOptions(full_state_dict=True, cpu_offload=True),
        )
    else:
        state = optimizer.state_dict()
    if accelerator.is_main_process:
        torch.save(state, directory / "optimizer.pt")


def load_training_state(accelerator, model, optimizer, directory: Path, load_model_weights) -> None:
    """Restore the weights and the optimizer state a checkpoint holds into the prepared model and optimizer."""
    if kind(accelerator) == "DEEPSPEED":
        path, _ = model.load_checkpoint(
            str(directory / DS_CHECKPOINT),
            tag=DS_TAG,
            load_optimizer_states=True,
            load_lr_scheduler_states=False,
            load_module_strict=False,
        )
        if path is None:
            raise ValueError(
                f"{directory} holds no DeepSpeed state ({DS_CHECKPOINT}/); it was not written by a DeepSpeed run"
            )
        return
    load_model_state(accelerator, model, directory, load_model_weights)
    if is_fsdp2(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True, strict=False)
        state = torch.load(directory / "optimizer.pt", weights_only=False) if accelerator.is_main_process else {}
        inner = optimizer.optimizer if hasattr(optimizer, "optimizer") else optimizer
        set_optimizer_state_dict(model, inner, state, options=options)
        return
    optimizer.load_state_dict(torch.load(directory / "optimizer.pt", weights_only=False))


def load_model_state(accelerator, model, directory: Path, load_model_weights) -> None:
    """Put the whole weights a checkpoint saved (save_pretrained) into the prepared model, sharded or not; every
    process calls this. ZeRO-3 gathers the partitions, the main process loads, DeepSpeed re-partitions."""
    module = accelerator.unwrap_model(model)
    if is_fsdp2(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True, strict=False)
        set_model_state_dict(model, read_weights(directory) if accelerator.is_main_process else {}, options=options)
    elif zero_stage(accelerator) == 3:
        import deepspeed

        with deepspeed.zero.GatheredParameters(list(module.parameters()), modifier_rank=0):
            if accelerator.is_main_process:
                load_model_weights(module, directory)
    else:
        load_model_weights(module, directory)


def read_weights(directory: Path) -> dict:
    from safetensors.torch import load_file

    state = {}
    for shard in sorted(directory.glob("model*.safetensors")):
        state.update(load_file(str(shard)))
    return state


def full_parameters(model):
    """Every parameter as a whole tensor (FSDP2 keeps DTensor shards), for mixing into the reference model."""
    for param in model.parameters():
        yield param.full_tensor() if hasattr(param, "full_tensor") else param
