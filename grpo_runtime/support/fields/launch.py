"""What grpo_runtime does with the fields of the `accelerate launch` keys a config file may carry."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, refuse_if, refused, warn_if
from grpo_schema.engine.codes import U_NO_EFFECT, U_PROCESSES, U_SHARDING


def _one_process_command(s: Setting) -> bool:
    return s.command == "train" and s.running == 1 and int(s.launch.get("num_processes") or 1) > 1


LAUNCHED = "cli.launch_arguments: passed to `accelerate launch` by `grpo launch` (the command line wins)"


ONLY_LAUNCH = warn_if(
    lambda s: s.command == "train",
    "an `accelerate launch` option: `grpo train` starts no "
    "launcher, so it cannot change this run (`grpo launch FILE` applies it)",
    U_NO_EFFECT,
)


SHARDED_LAUNCH = (
    "distributed.launcher_flags: accelerate's --config_file (our copies of the configs TRL ships for "
    "accelerate_config names), --use_deepspeed --zero_stage or --use_fsdp, passed by `grpo launch`"
)


FIELDS: dict[str, Support] = {
    "accelerate_config": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "config_file": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "cpu": honoured(LAUNCHED, ONLY_LAUNCH),
    "enable_cpu_affinity": honoured(LAUNCHED, ONLY_LAUNCH),
    "gpu_ids": honoured(LAUNCHED, ONLY_LAUNCH),
    "machine_rank": honoured(LAUNCHED, ONLY_LAUNCH),
    "main_process_ip": honoured(LAUNCHED, ONLY_LAUNCH),
    "main_process_port": honoured(LAUNCHED, ONLY_LAUNCH),
    "max_restarts": honoured(LAUNCHED, ONLY_LAUNCH),
    "mixed_precision": honoured(
        LAUNCHED + "; bf16/fp16 in the config decide the training precision, as in TRL", ONLY_LAUNCH
    ),
    "monitor_interval": honoured(LAUNCHED, ONLY_LAUNCH),
    "multi_gpu": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_cpu_threads_per_process": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_machines": honoured(LAUNCHED, ONLY_LAUNCH),
    "num_processes": honoured(
        "cli.launch_command: the processes `grpo launch` starts (--num-processes wins) and the world size the "
        "config is checked at",
        refuse_if(
            _one_process_command,
            lambda s: f"the file asks for {s.launch.get('num_processes')} processes but `grpo train` runs one",
            "start it with `grpo launch FILE` (num_processes is read from the file)",
            U_PROCESSES,
        ),
    ),
    "quiet": honoured(LAUNCHED, ONLY_LAUNCH),
    "rdzv_backend": honoured(LAUNCHED, ONLY_LAUNCH),
    "same_network": honoured(LAUNCHED, ONLY_LAUNCH),
    "use_deepspeed": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "use_fsdp": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
    "use_megatron_lm": refused(
        "Megatron-LM is not run by grpo_runtime",
        "remove use_megatron_lm",
        U_SHARDING,
        when=lambda s: bool(s.launch.get("use_megatron_lm")),
    ),
    "zero_stage": honoured(SHARDED_LAUNCH, ONLY_LAUNCH),
}
