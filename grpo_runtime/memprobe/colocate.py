"""The vLLM case: the runtime's colocated engine (generation.vllm_colocate.ColocateBackend) beside the policy, built
from a run config as the runtime builds it; needs the vLLM environment."""

from __future__ import annotations

from types import SimpleNamespace

from grpo_runtime.memprobe.models import build, shape_of


def prepare_vllm(case: dict, device: str, dtype) -> None:
    """Outside the measurement: vLLM's modules imported, and the policy's initial weights saved where the engine
    loads them from (model_name_or_path); the tokenizer is never read (the engine runs on token ids)."""
    import tempfile

    import vllm  # noqa: F401
    from vllm.model_executor.models import llama  # noqa: F401

    folder = tempfile.mkdtemp(prefix="memprobe-vllm-")
    build(*shape_of(case), device, dtype).save_pretrained(folder)
    case["vllm_model_dir"] = folder


def vllm_engine(case: dict, model, meter, out: dict):
    """The runtime's colocated engine (generation.vllm_colocate.ColocateBackend) built from a run config, as
    build_parts builds it; `vllm` is what it holds, `generation` the peak above that of loading the policy's weights
    into it and generating one batch (batch prompts x completion tokens, ignoring end-of-sequence)."""
    import yaml

    from grpo_runtime.generation.vllm_colocate import ColocateBackend
    from grpo_runtime.setup import new_accelerator
    from grpo_schema import check_text

    settings = dict(
        model_name_or_path=case["vllm_model_dir"],
        dataset_name="memprobe.jsonl",
        output_dir="memprobe-out",
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        per_device_train_batch_size=case["batch"],
        num_generations=case["batch"],
        gradient_accumulation_steps=2,
        max_completion_length=case["completion"],
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch",
        report_to="none",
        use_vllm=True,
        vllm_mode="colocate",
        generation_kwargs={"ignore_eos": True, "min_tokens": case["completion"]},
    )
    settings.update(case["vllm"] if isinstance(case["vllm"], dict) else {})
    result = check_text(yaml.safe_dump(settings), world_size=1)
    if not result.valid or result.plan is None:
        raise SystemExit(f"memprobe: the vLLM config does not validate: {result.diagnostics}")
    parts = SimpleNamespace(accelerator=new_accelerator(result.config, result.plan), model=model, eos_ids=[])
    before = meter.now()
    backend = ColocateBackend(result.config, result.plan, parts)
    out["vllm"] = meter.now() - before
    prompts = [list(range(1, case["prompt"] + 1))] * case["batch"]
    before = meter.now()
    meter.reset_peak()
    samples = backend.generate(prompts, case["batch"], step=0)
    out["generation"] = meter.peak() - before
    out["generated_tokens"] = sum(len(ids) for ids in samples.completions)
    return backend
