"""16 GRPO runs whose outcome on stated hardware is public.

Each case is the public recipe as best known (model, hardware, strategy, batch and lengths; where a recipe was
written for a TRL release that generated once per micro-step, the TRL 1.16 equivalent is steps_per_generation: 1)
and its outcome: it ran ("fits") or ran out of memory ("oom"). Sources:
open-r1's recipes (recipes/*/grpo/*.yaml, recipes/accelerate_configs) and issues, TRL's issues with nvidia-smi
peaks, the Open-RS paper (Dang & Ngo 2025, 4x A40), Mini-R1 (philschmid, 4x H100) and TRL's GRPO docs.
"""

BASE = {
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "dtype": "bfloat16",
    "bf16": True,
    "activation_checkpointing": True,
    "beta": 0.0,
}
SERVER = {"use_vllm": True, "vllm_mode": "server"}


def colocate(util, sleep=False):
    return {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": util,
        "vllm_enable_sleep_mode": sleep,
    }


def run(model, world, b, ga, gens, completion, strategy=None, **extra):
    return {
        **BASE,
        "model_name_or_path": model,
        "num_processes": world,
        "per_device_train_batch_size": b,
        "gradient_accumulation_steps": ga,
        "num_generations": gens,
        "max_completion_length": completion,
        **({"accelerate_config": strategy} if strategy else {}),
        **extra,
    }


# (name, config, hardware, prompt tokens, outcome)
RUNS = [
    (
        "open-r1 Qwen2.5-1.5B code recipe, ZeRO-2, 7 + vLLM server",
        run("Qwen/Qwen2.5-1.5B-Instruct", 7, 16, 4, 14, 2048, "zero2", **SERVER),
        "8xH100-80GB",
        512,
        "fits",
    ),
    (
        "open-r1 Qwen2.5-Coder-7B codeforces, ZeRO-3, 7 + vLLM server",
        run("Qwen/Qwen2.5-Coder-7B-Instruct", 7, 4, 8, 16, 4096, "zero3", **SERVER),
        "8xH100-80GB",
        1024,
        "fits",
    ),
    (
        "Open-RS DeepSeek-R1-Distill-Qwen-1.5B, 4x A40, ZeRO-2, 3 + vLLM server",
        run("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 3, 6, 4, 6, 3584, "zero2", **SERVER),
        "4xA40-48GB",
        512,
        "fits",
    ),
    (
        "Qwen3-1.7B on one A100-80GB, vLLM colocate",
        run("Qwen/Qwen3-1.7B", 1, 8, 4, 8, 2048, **colocate(0.3)),
        "1xA100-80GB",
        512,
        "fits",
    ),
    (
        "Qwen2.5-7B plain DDP on 4x96 GB, vLLM colocate 0.2",
        run("Qwen/Qwen2.5-7B-Instruct", 4, 4, 4, 8, 1024, "multi_gpu", **colocate(0.2)),
        "4x96GB",
        512,
        "oom",
    ),
    (
        "Mini-R1 Qwen2.5-3B countdown, ZeRO-3, 3 + vLLM server",
        run("Qwen/Qwen2.5-3B-Instruct", 3, 8, 8, 8, 1024, "zero3", steps_per_generation=1, beta=0.001, **SERVER),
        "4xH100-80GB",
        256,
        "fits",
    ),
    (
        "open-r1 Qwen2.5-Math-7B, ZeRO-3, 7 + vLLM server",
        run("Qwen/Qwen2.5-Math-7B", 7, 16, 8, 7, 1024, "zero3", steps_per_generation=1, **SERVER),
        "8xH100-80GB",
        512,
        "fits",
    ),
    (
        "TRL docs quickstart Qwen2-0.5B-Instruct, one GPU",
        run("Qwen/Qwen2-0.5B-Instruct", 1, 8, 1, 8, 256),
        "1xA100-80GB",
        512,
        "fits",
    ),
    (
        "TRL docs vLLM colocate Qwen2.5-1.5B, 8 GPUs, sleep mode",
        run("Qwen/Qwen2.5-1.5B-Instruct", 8, 8, 4, 8, 2048, "multi_gpu", **colocate(0.3, True)),
        "8xH100-80GB",
        512,
        "fits",
    ),
    (
        "Qwen2.5-0.5B LoRA on one RTX 4090",
        run("Qwen/Qwen2.5-0.5B-Instruct", 1, 8, 2, 8, 512, use_peft=True, lora_r=16),
        "1xRTX4090-24GB",
        256,
        "fits",
    ),
    (
        "Llama-3.1-8B, ZeRO-3, 7 + vLLM server",
        run("meta-llama/Llama-3.1-8B-Instruct", 7, 8, 4, 8, 2048, "zero3", **SERVER),
        "8xH100-80GB",
        512,
        "fits",
    ),
    (
        "Qwen2.5-7B full fine-tune on one A100-80GB, vLLM colocate",
        run("Qwen/Qwen2.5-7B-Instruct", 1, 4, 4, 8, 1024, **colocate(0.3)),
        "1xA100-80GB",
        512,
        "oom",
    ),
    (
        "Qwen2.5-14B, ZeRO-2, 8x A100-80GB, vLLM colocate",
        run("Qwen/Qwen2.5-14B-Instruct", 8, 2, 8, 8, 1024, "zero2", **colocate(0.3)),
        "8xA100-80GB",
        512,
        "oom",
    ),
    (
        "Qwen2.5-32B, ZeRO-3, 8x H100, vLLM colocate without sleep",
        run("Qwen/Qwen2.5-32B-Instruct", 8, 2, 8, 8, 2048, "zero3", **colocate(0.3)),
        "8xH100-80GB",
        512,
        "oom",
    ),
    (
        "Qwen2.5-3B full fine-tune on one 24 GB card",
        run("Qwen/Qwen2.5-3B-Instruct", 1, 4, 4, 8, 512),
        "1xRTX4090-24GB",
        256,
        "oom",
    ),
    (
        "Qwen2.5-7B ZeRO-2 on 8x A100-40GB, vLLM colocate",
        run("Qwen/Qwen2.5-7B-Instruct", 8, 4, 8, 8, 1024, "zero2", **colocate(0.3)),
        "8xA100-40GB",
        512,
        "oom",
    ),
]
