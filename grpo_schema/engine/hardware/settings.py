"""The estimate's settings (`Setup`) read from a checked config, with every guess named as an assumption."""

from __future__ import annotations

from typing import Any

from grpo_schema.engine.hardware.accelerators import Hardware
from grpo_schema.engine.hardware.memory import Setup
from grpo_schema.engine.hardware.reads import DATASET, EVERYTHING, NOTHING, TEMPLATE, LocalReads

DEFAULT_PROMPT_LENGTH = 512  # tokens, when neither --prompt-length, the hardware: section nor the data says

HALF = {"bfloat16", "float16", "bf16", "fp16", "half"}
ACCELERATE_STRATEGIES = {
    "zero1": "zero1",
    "zero2": "zero2",
    "zero3": "zero3",
    "fsdp": "fsdp",
    "fsdp1": "fsdp",
    "fsdp2": "fsdp",
    "multi_gpu": "ddp",
    "ddp": "ddp",
}
STRATEGIES = ("ddp", "zero1", "zero2", "zero3", "fsdp", "fsdp_grad_op")


def _get(config: Any, name: str, default: Any = None) -> Any:
    return getattr(config, name, default)


def _written(result: Any, *names: str) -> Any:
    """A value as written in the file under any of `names` (TRL 1.16 renamed some; the file still means them)."""
    return next((result.raw[n] for n in names if result.raw.get(n) is not None), None)


def weight_dtype(result: Any, model_dtype: str) -> str:
    config = result.config
    kwargs = _get(config, "model_init_kwargs") or {}
    value = (kwargs.get("dtype") or kwargs.get("torch_dtype") if isinstance(kwargs, dict) else None) or (
        _written(result, "dtype", "torch_dtype") or _get(config, "dtype") or "float32"
    )
    value = str(value).replace("torch.", "")
    return model_dtype if value == "auto" else value


def quantization_of(result: Any) -> tuple[str | None, bool]:
    """bitsandbytes' quantisation of the base model: load_in_4bit (bnb_4bit_quant_type, use_bnb_nested_quant) or
    load_in_8bit, as `trl grpo` builds its BitsAndBytesConfig, or a quantization_config mapping in
    model_init_kwargs (bnb's own key names)."""
    config = result.config
    kwargs = _get(config, "model_init_kwargs") or {}
    mapping = kwargs.get("quantization_config") if isinstance(kwargs, dict) else None
    if isinstance(mapping, dict):
        if mapping.get("load_in_4bit"):
            return str(mapping.get("bnb_4bit_quant_type") or "fp4").lower(), bool(
                mapping.get("bnb_4bit_use_double_quant")
            )
        if mapping.get("load_in_8bit"):
            return "int8", False
    if _get(config, "load_in_4bit"):
        return str(_get(config, "bnb_4bit_quant_type") or "nf4").lower(), bool(_get(config, "use_bnb_nested_quant"))
    if _get(config, "load_in_8bit"):
        return "int8", False
    return None, False


def attention_of(config: Any) -> str:
    """The attention implementation the model is loaded with: model_init_kwargs' wins over attn_implementation (as
    `trl grpo` builds its model_init_kwargs); transformers' default is sdpa."""
    kwargs = _get(config, "model_init_kwargs") or {}
    chosen = kwargs.get("attn_implementation") if isinstance(kwargs, dict) else None
    return str(chosen or _get(config, "attn_implementation") or "sdpa")


def strategy_of(
    result: Any, section: dict, given: str | None, *, offload: str | None = None, local_files: bool = True
) -> tuple[str, bool, bool, str, Any]:
    """(strategy, offload optimizer, offload params, where the strategy came from, the LaunchFacts)."""
    from grpo_schema.engine.hardware.launch import read_launch

    facts = read_launch(result, section, strategy=given, offload=offload, local_files=local_files)
    if facts.strategy is None:  # a file named but not read here: its name usually says the strategy
        launch, deepspeed = result.launch, _get(result.config, "deepspeed")
        named = str(launch.get("accelerate_config") or launch.get("config_file") or "").lower().rsplit("/", 1)[-1]
        for key, strategy in ACCELERATE_STRATEGIES.items():
            if key in named:
                facts.set("strategy", strategy, f"the accelerate config's file name {named!r} (not read)")
                break
        if facts.strategy is None and isinstance(deepspeed, str):
            for stage in ("3", "2", "1"):
                if f"zero{stage}" in deepspeed.lower() or f"zero_{stage}" in deepspeed.lower():
                    facts.set("strategy", f"zero{stage}", f"the deepspeed file's name {deepspeed!r} (not read)")
                    break
    if facts.strategy is None:
        facts.set("strategy", "ddp", "default")
    return (facts.strategy, bool(facts.offload_optimizer), bool(facts.offload_params), facts.sources["strategy"], facts)


def world_size_of(result: Any, hardware: Hardware) -> tuple[int, str | None]:
    if result.sources.get("world_size"):
        return result.world_size, None
    config = result.config
    if _get(config, "use_vllm") and _get(config, "vllm_mode") == "server":
        server = max(int(_get(config, "vllm_tensor_parallel_size") or 1), 1)
        return max(hardware.gpus - server, 1), f"{server} GPU(s) kept for the vLLM server (vllm_mode: server)"
    return hardware.gpus, None


def prompt_lengths_of(result: Any, reads: LocalReads | None = None):
    """The prompt lengths of the config's dataset when its rows are on this machine (grpo_schema.engine.hardware.
    prompts), read as the engine reads them: TRL 1.16's `prompt` column and chat_template_kwargs; under the open-r1
    profile its recipe's dataset_prompt_column, system_prompt and chat_template. None otherwise. `reads`
    (LocalReads): where relative paths are read from and whether the model's tokenizer may be; default: all, from
    the working directory."""
    from grpo_schema.engine.hardware.prompts import data_prompt_lengths

    config, reads = result.config, reads or EVERYTHING
    recipe = (getattr(result, "profile_args", None) or {}).get("open-r1")
    kwargs = _get(config, "chat_template_kwargs")
    template = _get(recipe, "chat_template") if recipe is not None else None
    unrendered = reads.refused.get(TEMPLATE) if template else None  # the model's own template is used instead
    return data_prompt_lengths(
        _get(config, "dataset_name"),
        config_name=_get(config, "dataset_config"),
        split=_get(config, "dataset_train_split") or "train",
        column=str(_get(recipe, "dataset_prompt_column") or "prompt") if recipe is not None else "prompt",
        system_prompt=_get(recipe, "system_prompt") if recipe is not None else None,
        chat_template=None if unrendered else template,
        template_note=unrendered,
        model=_get(config, "model_name_or_path"),
        revision=_get(config, "model_revision"),
        template_kwargs=kwargs if isinstance(kwargs, dict) else None,
        reads=reads,
    )


def no_data_reason(reads: LocalReads | None, local_files: bool) -> str:
    """Why the plan has no prompt lengths from the data, and how to give one."""
    reads = reads or (EVERYTHING if local_files else NOTHING)
    why = reads.refused.get(DATASET) or "the dataset is not on this machine"
    return f"{why}; pass {reads.prompt_option}"


def _planned_prompt_length(
    result: Any, given: int | None, lengths: Any, reads: LocalReads | None, local_files: bool, notes: list[str]
) -> int:
    """The prompt length the estimate plans for: the one given, else the data's 95th percentile, else the length
    the judged release truncates prompts to (max_prompt_length up to TRL 0.25), else DEFAULT_PROMPT_LENGTH; never
    longer than that truncation, which cuts every prompt before it reaches the model."""
    from grpo_schema.engine.release import prompt_cap

    cap, cap_source = prompt_cap(getattr(result, "trl_version", None), getattr(result, "raw", None))
    if given is not None:
        length, said = int(given), f"prompts of {given} tokens (given)"
    elif lengths is not None:
        length, said = int(lengths.p95), lengths.describe()
    elif cap is not None:
        notes.append(f"prompts of {cap} tokens at most: {cap_source}")
        return cap
    else:
        length = DEFAULT_PROMPT_LENGTH
        said = f"prompts of {length} tokens (a default: {no_data_reason(reads, local_files)})"
    if cap is not None and length > cap:
        notes.append(f"{said}, truncated to {cap} tokens: {cap_source}")
        return cap
    notes.append(said)
    return length


def _generates_per_micro_step(result: Any) -> bool:
    """Whether the judged release generates at each micro-step, for that micro-step alone (TRL 0.14-0.16: no
    steps_per_generation, and a batch check without gradient_accumulation_steps), even where its schedule is walked
    as one generation of several slices (0.16 reusing them for num_iterations optimizer steps)."""
    from grpo_schema.engine.release import release_surface

    release = release_surface(getattr(result, "trl_version", None))
    if release is None or "steps_per_generation" in release.fields:
        return False
    train = release.batch.train_check
    return train is None or "gradient_accumulation_steps" not in train.product


def setup_from(
    result: Any,
    hardware: Hardware,
    *,
    prompt_length: int | None = None,
    strategy: str | None = None,
    section: dict | None = None,
    model_dtype: str = "bfloat16",
    engine: str = "trl",
    offload: str | None = None,
    local_files: bool = True,
    lengths: Any = None,
    reads: LocalReads | None = None,
) -> tuple[Setup | None, list[str]]:
    """The estimate's settings and every assumption behind them. `lengths`: the dataset's prompt lengths
    (prompt_lengths_of), planned at their 95th percentile when no prompt length is given; `reads` (LocalReads):
    what was read, for the reason a default prompt length is used."""
    config, plan, section = result.config, result.plan, section or {}
    notes: list[str] = [f"engine {engine}"]
    prompt_length = _planned_prompt_length(result, prompt_length, lengths, reads, local_files, notes)
    b, rows = _micro_batch_and_rows(result, notes)
    dtype = weight_dtype(result, model_dtype)
    mixed = bool(_get(config, "bf16")) or bool(_get(config, "fp16")) or _get(config, "bf16") is None
    weight_bytes = 2 if dtype in HALF else 4
    chosen, offload_opt, offload_params, extra = _distributed(result, section, strategy, offload, local_files, notes)
    quantized, nested = quantization_of(result)
    setup = Setup(
        world_size=result.world_size,
        micro_batch=b,
        prompt_length=int(prompt_length),
        completion_length=int(config.max_completion_length or 256),
        generation_rows=max(int(rows), 1),
        gradient_accumulation_steps=int(config.gradient_accumulation_steps),
        weight_bytes=weight_bytes,
        compute_bytes=2 if (mixed or weight_bytes == 2) else 4,
        autocast=mixed and weight_bytes == 4,
        strategy=chosen,
        offload_optimizer=offload_opt,
        offload_params=offload_params,
        mixed_precision=mixed,
        old_logprobs=bool(plan.old_logprobs_needed) if plan is not None else False,
        quantization=quantized,
        nested_quant=nested,
        engine=engine,
        **_feature_settings(config),
        **extra,
    )
    notes += _weight_notes(dtype, setup.autocast, quantized, nested)
    return setup, notes


def _weight_notes(dtype: str, autocast: bool, quantized: Any, nested: Any) -> list[str]:
    """The weights' dtype, autocast, and bitsandbytes quantisation, as assumptions."""
    notes = [f"weights in {dtype}" + (" with bf16/fp16 autocast" if autocast else "")]
    if quantized:
        from grpo_schema.engine.hardware.quantization import describe

        notes.append(
            f"base projections quantised by bitsandbytes: {describe(quantized, nested)} "
            f"({'load_in_8bit' if quantized == 'int8' else 'load_in_4bit'})"
        )
    return notes


def _micro_batch_and_rows(result: Any, notes: list[str]) -> tuple[int, int]:
    """Completions per device per micro-step, and the rows each device generates at once."""
    config, plan, world = result.config, result.plan, result.world_size
    b = int(config.per_device_train_batch_size)
    if plan is not None and plan.per_device_unit == "prompts":  # TRL 0.14: each of the b prompts gets G rows
        b = plan.completions_per_micro_batch
        notes.append(
            f"per_device_train_batch_size counts prompts in this release: {b} completions per micro-step "
            f"({plan.per_device_train_batch_size} x num_generations {plan.num_generations})"
        )
    rows = plan.generation_batch_size // max(world, 1) if plan is not None else b * config.gradient_accumulation_steps
    if _generates_per_micro_step(result):  # TRL 0.14-0.16: each micro-step generates only what it trains on
        rows = b
    return b, rows


def _distributed(
    result: Any, section: dict, strategy: str | None, offload: str | None, local_files: bool, notes: list[str]
) -> tuple[str, Any, Any, dict[str, Any]]:
    """The distributed strategy, its offloads and the launch file's tunings (as Setup keywords), each noted with
    where it came from."""
    chosen, offload_opt, offload_params, origin, launch = strategy_of(
        result, section, strategy, offload=offload, local_files=local_files
    )
    if chosen not in STRATEGIES:
        chosen = "ddp"
    notes.append(f"distributed strategy {chosen} ({origin})")
    if chosen != "ddp":
        for fact, what in (("offload_optimizer", "optimizer states"), ("offload_params", "parameters")):
            state = "offloaded to the CPU" if getattr(launch, fact) else "on the GPU"
            notes.append(f"{what} {state} ({launch.sources.get(fact, 'default')})")
    for fact in ("reduce_bucket_size", "max_live_parameters", "mixed_precision"):
        if fact in launch.sources:
            notes.append(f"{fact.replace('_', ' ')} {getattr(launch, fact) or 'auto'} ({launch.sources[fact]})")
    notes += [f"launch file {problem}" for problem in launch.problems]
    extra: dict[str, Any] = {}
    if launch.reduce_bucket_size is not None:
        extra["reduce_bucket_size"] = launch.reduce_bucket_size
    if launch.max_live_parameters:  # "auto" leaves DeepSpeed's default
        extra["max_live_parameters"] = launch.max_live_parameters
    return chosen, offload_opt, offload_params, extra


def _feature_settings(config: Any) -> dict[str, Any]:
    """The Setup keywords read straight from the config: optimiser, checkpointing, attention, loss terms, LoRA,
    vLLM and kernels."""
    checkpointing = _get(config, "activation_checkpointing")
    if checkpointing is None:
        checkpointing = _get(config, "gradient_checkpointing", True)
    targets = _get(config, "lora_target_modules")
    return dict(
        optim=str(_get(config, "optim") or "adamw_torch"),
        activation_checkpointing=bool(checkpointing),
        attention=attention_of(config),
        entropy=True,
        reference=float(_get(config, "beta") or 0.0) != 0.0,
        use_peft=bool(_get(config, "use_peft")),
        lora_r=int(_get(config, "lora_r") or 16),
        lora_dropout=float(0.05 if _get(config, "lora_dropout") is None else _get(config, "lora_dropout")),
        lora_targets=tuple(targets) if isinstance(targets, (list, tuple)) else ((targets,) if targets else None),
        use_vllm=bool(_get(config, "use_vllm")),
        vllm_mode=str(_get(config, "vllm_mode") or "colocate"),
        vllm_memory_utilization=float(_get(config, "vllm_gpu_memory_utilization") or 0.3),
        vllm_max_model_length=_get(config, "vllm_max_model_length"),
        vllm_tensor_parallel_size=int(_get(config, "vllm_tensor_parallel_size") or 1),
        vllm_sleep=bool(_get(config, "vllm_enable_sleep_mode")),
        liger_loss=bool(_get(config, "use_liger_kernel")) or bool(_get(config, "use_liger_loss")),
        lm_head_fp32=bool(_get(config, "cast_lm_head_to_fp32")),
    )
