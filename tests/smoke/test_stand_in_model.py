"""The smoke's stand-in model fits every engine it may meet on any CPU: a head size vLLM's CPU attention has a
kernel for on every instruction set (16 is refused on a CPU with AVX-512 or AMX: "Unsupported CPU attention
configuration: head_dim=16 isa=2"), and at least the positions the recipe asks of it (a vLLM context length of
6144, a prompt plus completion length); the report names the CPU's features."""

import pytest

from grpo_runtime.smoke.cpu import cpu_description, cpu_features
from grpo_runtime.smoke.model import catalogue_config, context_length, shrink, substitute_model
from grpo_runtime.smoke.plan import SmokePlan

# vLLM's CPU attention kernels are built for these head sizes on every ISA (AMX, AVX-512 and generic vectors,
# NEON, VXE); 80 and 112 on its 16-lane vector kernel only (csrc/cpu/generate_cpu_attn_dispatch.py).
EVERY_ISA = {32, 64, 96, 128, 160, 192, 224, 256}

# A Sapphire Rapids CPU's flags line (4th-generation Xeon: AVX-512 and AMX), as /proc/cpuinfo writes it.
SAPPHIRE_RAPIDS = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx "
    "avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 avx512_vnni amx_bf16 amx_tile "
    "amx_int8\n\nprocessor\t: 1\nflags\t\t: fpu\n"
)
GRAVITON = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 sve sve2\n"


def recipe(tmp_path, **settings):
    import yaml

    from grpo_schema import check_file

    path = tmp_path / "recipe.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
                "dataset_name": "x/y",
                "reward_funcs": ["accuracy"],
                **settings,
            }
        )
    )
    return check_file(path).config


@pytest.mark.parametrize(
    "name",
    [
        "Qwen/Qwen2.5-0.5B-Instruct",
        "Qwen/Qwen3-0.6B",
        "meta-llama/Llama-3.2-1B",
        "mistralai/Mistral-7B-Instruct-v0.3",
        "microsoft/phi-4",
    ],
)
def test_the_stand_in_has_a_head_size_every_cpu_kernel_takes_and_the_recipes_positions(tmp_path, name):
    import torch
    from transformers import AutoModelForCausalLM

    from grpo_runtime.model.tiny import build_byte_tokenizer

    config = recipe(tmp_path, vllm_max_model_length=6144, use_vllm=True)
    model_config, facts = catalogue_config(name)
    assert facts is not None, name
    tokenizer = build_byte_tokenizer()
    shrunk = shrink(model_config, len(tokenizer), tokenizer, context_length(config))
    head = getattr(shrunk, "head_dim", None) or shrunk.hidden_size // shrunk.num_attention_heads
    assert head in EVERY_ISA and head * shrunk.num_attention_heads == shrunk.hidden_size, (name, head)
    assert shrunk.max_position_embeddings >= 6144
    model = AutoModelForCausalLM.from_config(shrunk, dtype=torch.float32)
    out = model(torch.tensor([[1, 2, 3, 4]]))  # the shape holds together: one forward pass
    assert out.logits.shape == (1, 4, len(tokenizer))


def test_the_context_length_is_the_largest_the_recipe_asks():
    from types import SimpleNamespace

    assert context_length(SimpleNamespace(max_completion_length=32)) == 4096  # nothing asked: the floor
    assert context_length(SimpleNamespace(vllm_max_model_length=6144)) == 6144
    assert context_length(SimpleNamespace(max_prompt_length=8192, max_completion_length=2048)) == 10240


def test_the_report_names_the_cpus_kernel_features(tmp_path):
    assert cpu_features(SAPPHIRE_RAPIDS) == ["avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile"]
    assert cpu_features(GRAVITON) == ["asimd", "sve", "sve2"]
    assert cpu_features("") == []
    plan = SmokePlan()
    substitute_model(recipe(tmp_path, max_completion_length=16), plan, tmp_path)
    groups = {g.group: g for g in plan.groups}
    assert groups["CPU"].detail.startswith(cpu_description())
    assert "2 heads of 32" in groups["model"].detail and "4096 positions" in groups["model"].detail
