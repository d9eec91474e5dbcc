"""`grpo plan` against a second set of 15 GRPO runs whose outcome on stated hardware is public, none of them in
tests/hardware/test_public_runs.py: QLoRA and LoRA runs on small GPUs, full fine-tuning without any memory saving,
a colocated vLLM, and DeepSpeed ZeRO-3 with CPU offload.

The set was collected and scored before the planner was changed for it: 14 of 15 right (the one miss is marked
xfail, strict, with the reason), and the same after each change since (docs/planner.md, "Checked against public
runs"). Each case is the run as its source states it, translated to TRL 1.16's keys
where an older release named them otherwise (a release before 0.16 generated num_generations completions per prompt
of per_device_train_batch_size: the same sequences per process are per_device_train_batch_size x num_generations
here); what the source does not state is TRL 1.16's default, and each case says what it assumes.
"""

import pytest

from grpo_schema.commands.plan import check_for_hardware

# TRL's notebook examples/notebooks/grpo_trl_lora_qlora.ipynb (TRL 1.x, run on a Colab T4: "GPU = Tesla T4. Max
# memory = 14.741 GB"; its model list marks each model "✅ ~N GB VRAM" or "⚠️ OOM with this config"): QLoRA NF4 with
# nested quantisation, LoRA r 32 on the 7 projections (peft's default dropout 0), fp32 loading, SDPA, 8 x 256
# completion tokens, paged_adamw_8bit, Liger; prompts are NuminaMath-TIR problems under a 60-word system prompt.
QLORA_NOTEBOOK = "https://github.com/huggingface/trl/blob/main/examples/notebooks/grpo_trl_lora_qlora.ipynb"
QLORA = {
    "dataset_name": "AI-MO/NuminaMath-TIR",
    "reward_funcs": ["accuracy_reward"],
    "model_init_kwargs": {"attn_implementation": "sdpa", "dtype": "float32"},
    "load_in_4bit": True,
    "bnb_4bit_quant_type": "nf4",
    "use_bnb_nested_quant": True,
    "use_peft": True,
    "lora_r": 32,
    "lora_alpha": 32,
    "lora_dropout": 0.0,
    "lora_target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "max_completion_length": 256,
    "optim": "paged_adamw_8bit",
    "use_liger_kernel": True,
}
# The same notebook's table, row "Worst (naive FP16)": no LoRA, no quantisation, no Liger, AdamW (TRL's default,
# adamw_torch_fused), no gradient checkpointing, eager attention, fp16 weights, the same batch: "OOM" on the T4 and
# on an A100-40GB, "62 GB" on an A100-80GB.
NAIVE = {
    "dataset_name": "AI-MO/NuminaMath-TIR",
    "reward_funcs": ["accuracy_reward"],
    "model_name_or_path": "Qwen/Qwen2-7B-Instruct",
    "model_init_kwargs": {"attn_implementation": "eager", "dtype": "float16"},
    "gradient_checkpointing": False,
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "max_completion_length": 256,
}
# TRL's docs/source/example_overview.md lists examples/notebooks/grpo_agent.ipynb as "Not available due to OOM with
# Colab GPUs" (the largest, an A100-40GB): Qwen3-1.7B, full fine-tuning, vLLM colocated without sleep mode, 1024
# completion tokens, TRL's defaults otherwise (8 x 8, fp32 loading, checkpointing); prompts carry the tools' schema.
AGENT = "https://github.com/huggingface/trl/blob/main/docs/source/example_overview.md"
# huggingface/trl-tuto train_rick/02_grpo.ipynb: "designed to run with at least 16GB of GPU memory, such as ... Colab
# ... T4", README "(Requires T4 GPU)": SmolLM2-360M (qgallouedec/SmolLM2-360M-Rickified, an SFT of it), full
# fine-tuning, 4 x 16 generations over 4 accumulation steps, 512 completion tokens, checkpointing, bf16.
RICK = "https://github.com/huggingface/trl-tuto/blob/main/train_rick/02_grpo.ipynb"
# TRL's docs/source/lora_without_regret.md, its GRPO job on HF Jobs' a100-large (one A100 80GB): Qwen3-0.6B, LoRA
# r 1 on all-linear without dropout, 16 generations of 4096 tokens a step, 1 x 8 accumulation, vLLM colocated.
REGRET = "https://github.com/huggingface/trl/blob/main/docs/source/lora_without_regret.md"
# open-r1#47 "Crazy VRAM usage with longer prompts": "a node of A100-80gb (640gb vram) + ds z3 cpu offload", a 7B in
# bf16, 1 prompt x 8 generations per GPU (TRL 0.14), default 256 completion tokens, no vLLM, no checkpointing (0.14's
# defaults): "The default 512 setting works but if I use e.g. 4096 it wouldn't run". The 7B is taken as Qwen2.5-7B.
OPEN_R1_47 = "https://github.com/huggingface/open-r1/issues/47"
OFFLOADED_7B = {
    "dataset_name": "AI-MO/NuminaMath-TIR",
    "reward_funcs": ["accuracy_reward"],
    "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
    "dtype": "bfloat16",
    "bf16": True,
    "accelerate_config": "zero3",
    "gradient_checkpointing": False,
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "max_completion_length": 256,
}
# open-r1#100: the README's GRPO command for DeepSeek-R1-Distill-Qwen-7B (zero3.yaml, 8 processes, 1 prompt x 8
# generations, 256-token prompts, TRL 0.14's 256 completion tokens, no vLLM, no checkpointing): "I managed to get it
# running with 8xH100's on Modal, but it was slow going at 119s/it".
OPEN_R1_100 = "https://github.com/huggingface/open-r1/issues/100"


def qlora(model):
    return {**QLORA, "model_name_or_path": model}


# (name, source, config, hardware, prompt tokens, launch options, outcome)
RUNS = [
    (
        "QLoRA Qwen2-7B-Instruct on a Colab T4",
        QLORA_NOTEBOOK,
        qlora("Qwen/Qwen2-7B-Instruct"),
        "colab-t4",
        256,
        {},
        "fits",
    ),
    ("QLoRA Qwen3-8B on a Colab T4", QLORA_NOTEBOOK, qlora("Qwen/Qwen3-8B"), "colab-t4", 256, {}, "fits"),
    (
        "QLoRA Qwen2.5-7B-Instruct on a Colab T4",
        QLORA_NOTEBOOK,
        qlora("Qwen/Qwen2.5-7B-Instruct"),
        "colab-t4",
        256,
        {},
        "fits",
    ),
    (
        "QLoRA Llama-3.2-3B-Instruct on a Colab T4",
        QLORA_NOTEBOOK,
        qlora("meta-llama/Llama-3.2-3B-Instruct"),
        "colab-t4",
        256,
        {},
        "fits",
    ),
    (
        "QLoRA Llama-3.1-8B-Instruct on a Colab T4",
        QLORA_NOTEBOOK,
        qlora("meta-llama/Llama-3.1-8B-Instruct"),
        "colab-t4",
        256,
        {},
        "fits",
    ),
    # unsloth/qwen3-14b-unsloth-bnb-4bit: Qwen3-14B already stored in bitsandbytes 4-bit
    ("QLoRA Qwen3-14B on a Colab T4", QLORA_NOTEBOOK, qlora("Qwen/Qwen3-14B"), "colab-t4", 256, {}, "oom"),
    ("naive fp16 Qwen2-7B full fine-tune on a Colab T4", QLORA_NOTEBOOK, NAIVE, "colab-t4", 256, {}, "oom"),
    ("naive fp16 Qwen2-7B full fine-tune on an A100-40GB", QLORA_NOTEBOOK, NAIVE, "1xA100-40GB", 256, {}, "oom"),
    pytest.param(
        "naive fp16 Qwen2-7B full fine-tune on an A100-80GB",
        QLORA_NOTEBOOK,
        NAIVE,
        "1xA100-80GB",
        256,
        {},
        "fits",
        marks=pytest.mark.xfail(
            strict=True,
            reason=(
                "the one miss: the notebook measured a 62 GB peak; the plan's held 42.6 GiB (fp16 weights, fused AdamW "
                "states) is right, but at 256-token prompts every sequence is planned at 512 tokens and eager "
                "attention's saved tensors come to 34.7 GiB; the source states no prompt length, and NuminaMath-TIR's "
                "prompts are mostly shorter"
            ),
        ),
        id="naive fp16 Qwen2-7B full fine-tune on an A100-80GB",
    ),
    (
        "Qwen3-1.7B agent, vLLM colocate, on an A100-40GB",
        AGENT,
        {
            "dataset_name": "qgallouedec/biogrid_qa",
            "reward_funcs": ["accuracy_reward"],
            "model_name_or_path": "Qwen/Qwen3-1.7B",
            "use_vllm": True,
            "vllm_mode": "colocate",
            "vllm_enable_sleep_mode": False,
            "max_completion_length": 1024,
        },
        "1xA100-40GB",
        512,
        {},
        "oom",
    ),
    (
        "SmolLM2-360M full fine-tune on a Colab T4",
        RICK,
        {
            "dataset_name": "qgallouedec/rick-physics-grpo",
            "reward_funcs": ["accuracy_reward"],
            "model_name_or_path": "HuggingFaceTB/SmolLM2-360M-Instruct",
            "per_device_train_batch_size": 4,
            "gradient_accumulation_steps": 4,
            "num_generations": 16,
            "max_completion_length": 512,
            "gradient_checkpointing": True,
            "bf16": True,
        },
        "colab-t4",
        128,
        {},
        "fits",
    ),
    (
        "LoRA r1 Qwen3-0.6B, 16 x 4096 tokens, vLLM colocate, on an A100-80GB",
        REGRET,
        {
            "dataset_name": "HuggingFaceH4/OpenR1-Math-220k-default-verified",
            "reward_funcs": ["accuracy_reward"],
            "model_name_or_path": "Qwen/Qwen3-0.6B",
            "use_peft": True,
            "lora_r": 1,
            "lora_alpha": 32,
            "lora_dropout": 0.0,
            "lora_target_modules": ["all-linear"],
            "per_device_train_batch_size": 1,
            "gradient_accumulation_steps": 8,
            "num_generations": 16,
            "generation_batch_size": 16,
            "max_completion_length": 4096,
            "beta": 0.0,
            "use_vllm": True,
            "vllm_mode": "colocate",
        },
        "1xA100-80GB",
        512,
        {},
        "fits",
    ),
    (
        "7B ZeRO-3 with CPU offload, 512-token prompts, 8x A100-80GB",
        OPEN_R1_47,
        OFFLOADED_7B,
        "8xA100-80GB",
        512,
        {"offload": "both"},
        "fits",
    ),
    (
        "7B ZeRO-3 with CPU offload, 4096-token prompts, 8x A100-80GB",
        OPEN_R1_47,
        OFFLOADED_7B,
        "8xA100-80GB",
        4096,
        {"offload": "both"},
        "oom",
    ),
    (
        "DeepSeek-R1-Distill-Qwen-7B ZeRO-3 on 8x H100",
        OPEN_R1_100,
        {
            "dataset_name": "AI-MO/NuminaMath-TIR",
            "reward_funcs": ["accuracy_reward"],
            "model_name_or_path": "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
            "dtype": "bfloat16",
            "bf16": True,
            "accelerate_config": "zero3",
            "gradient_checkpointing": False,
            "per_device_train_batch_size": 8,
            "num_generations": 8,
            "max_completion_length": 256,
        },
        "8xH100-80GB",
        256,
        {},
        "fits",
    ),
]


def plan(config, hardware, prompt, **options):
    result, report = check_for_hardware(
        config, "run.yaml", hardware, prompt_length=prompt, batch_fixes=False, local_files=False, **options
    )
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    return report


def values(run) -> tuple:
    return tuple(run.values) if hasattr(run, "values") else run


def test_the_set_is_fifteen_runs_none_from_the_first_set():
    from tests.support.public_runs import RUNS as FIRST

    runs = [values(run) for run in RUNS]
    assert len(runs) == 15
    assert {run[0] for run in runs}.isdisjoint({name for name, *_ in FIRST})
    assert {(run[2].get("model_name_or_path"), run[3]) for run in runs}.isdisjoint(
        {(config["model_name_or_path"], hardware) for _, config, hardware, *_ in FIRST}
    )
    assert all(run[1].startswith("https://github.com/") for run in runs)


@pytest.mark.parametrize(
    "name, source, config, hardware, prompt, options, outcome", RUNS, ids=[values(r)[0] for r in RUNS]
)
def test_heldout_run_verdict(name, source, config, hardware, prompt, options, outcome):
    report = plan(config, hardware, prompt, **options)
    assert report.memory is not None, (name, report.no_estimate())
    assert report.fits is (outcome == "fits"), (
        name,
        source,
        round(report.memory.total / 2**30, 1),
        [(p.name, round(p.bytes / 2**30, 1)) for p in report.memory.at_peak()],
        [d.message for d in report.diagnostics if d.severity == "error"],
    )
