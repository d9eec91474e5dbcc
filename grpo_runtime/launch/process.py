"""How a run's processes start on this machine: the `accelerate launch` flags from the file's launch keys and the
defaults nobody gave (`grpo launch`, `grpo smoke`), and the library notices a run's own process quiets."""

from __future__ import annotations


def quiet_unused_kernel_notice(config) -> None:
    """peft imports bitsandbytes, whose CPU backend logs "Failed to load CPU gemm_4bit_forward" when the optional
    `kernels` package is missing: a speed notice about 4-bit matmuls on CPU. Keep it for runs that load 4-bit
    weights; for every other run it reads like a failure and means nothing."""
    import logging

    if not config.load_in_4bit:
        logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)


def quiet_library_progress_bars() -> None:
    """Loading weights and reading data print their own bars; the run's bar is the one that matters."""
    import datasets
    import transformers

    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()


def launch_arguments(launch: dict, given: list[str]) -> list[str]:
    """`accelerate launch` flags for the launch keys of the file that the command line does not set. On/off keys
    become bare flags when true; num_processes is passed on its own; the sharding keys (accelerate_config,
    use_deepspeed, zero_stage, use_fsdp, config_file) become accelerate's flags through grpo_runtime.distributed.accelerate."""
    from grpo_runtime.distributed.accelerate import LAUNCH_FLAGS, SHARDING_LAUNCH_KEYS, launcher_flags

    named = {item.split("=", 1)[0].lstrip("-").replace("-", "_") for item in given if item.startswith("--")}
    flags = launcher_flags(launch, given)
    for key, value in launch.items():
        if key == "num_processes" or key in SHARDING_LAUNCH_KEYS or key in named or value is None:
            continue
        if key in LAUNCH_FLAGS:
            flags += [f"--{key}"] if value else []
        else:
            flags += [f"--{key}", str(value)]
    return flags


def default_launch_args(accelerate_args: list[str], num_processes: int, config) -> list[str]:
    """Launcher flags nobody gave: the config's mixed precision and, for several processes without an
    accelerate config file, accelerate's multi-process launcher (torchrun). Despite its name, `--multi_gpu` is
    the flag that selects it; on a machine without GPUs the processes use the CPU and the gloo backend."""
    from grpo_runtime.distributed.accelerate import BUNDLED_DIR
    from grpo_runtime.distributed.precision import mixed_precision

    given = " ".join(accelerate_args)
    if "--config_file" in given and str(BUNDLED_DIR) not in given:  # the user's accelerate config decides all
        return []
    defaults = {"--num_machines": "1", "--dynamo_backend": "no", "--mixed_precision": mixed_precision(config)}
    extra = [item for flag, value in defaults.items() if flag not in given for item in (flag, value)]
    modes = ("--multi_gpu", "--use_deepspeed", "--use_fsdp", "--cpu", "--tpu", "--config_file")
    if num_processes > 1 and not any(mode in given for mode in modes):
        extra.append("--multi_gpu")
    if num_processes > 1 and "--main_process_port" not in given and machines(accelerate_args) == "1":
        extra += ["--main_process_port", str(free_port())]  # never accelerate's fixed 29500: another run may hold it
    return extra


def machines(accelerate_args: list[str]) -> str:
    """The --num_machines the flags give ("1" when none does)."""
    from grpo_runtime.distributed.accelerate import flag_value

    return flag_value(accelerate_args, "--num_machines") or "1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now: the rendezvous of a run on this machine."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
