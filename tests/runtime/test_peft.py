"""LoRA through `use_peft`: only the adapter trains, the reference is the model with the adapter disabled, and a
resumed run matches an uninterrupted one."""

import pytest
import torch
from safetensors.torch import load_file

from grpo_runtime.train import main

from .helpers import base_settings, validated, write_prompts

pytest.importorskip("peft", reason="use_peft needs the peft package")
pytestmark = pytest.mark.slow


def run(tmp_path, tiny_model_dir, name, **overrides):
    out = tmp_path / name
    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), out)
    settings.update(
        use_peft=True,
        lora_r=4,
        lora_alpha=8,
        lora_dropout=0.0,
        lora_target_modules=["q_proj", "v_proj"],
        beta=0.04,
        activation_checkpointing=True,
        max_steps=4,
        save_steps=2,
    )
    settings.update(overrides)
    result = validated(settings)
    main(result.config, result.plan)
    return out


def test_lora_trains_the_adapter_and_resumes_exactly(tmp_path, tiny_model_dir):
    full = run(tmp_path, tiny_model_dir, "full")
    adapter = load_file(str(full / "adapter_model.safetensors"))
    assert adapter and all("lora_" in name for name in adapter)
    assert any(name.endswith("lora_B.weight") and value.abs().sum() > 0 for name, value in adapter.items())
    assert not (full / "model.safetensors").exists()  # the base weights are not rewritten

    resumed = run(tmp_path, tiny_model_dir, "resumed", resume_from_checkpoint=str(full / "checkpoint-2"))
    again = load_file(str(resumed / "adapter_model.safetensors"))
    assert all(torch.equal(adapter[name], again[name]) for name in adapter)


@pytest.mark.parametrize("bits", [4, 8])
def test_qlora_trains_bf16_adapters_on_quantised_weights(tmp_path, tiny_model_dir, monkeypatch, bits):
    """load_in_4bit / load_in_8bit (bitsandbytes, whose wheels run on a CPU): the base layers are quantised, only the
    LoRA weights train, in bf16 as TRL keeps them, and the run's adapter is saved."""
    pytest.importorskip("bitsandbytes", reason="quantised loading needs bitsandbytes")
    import bitsandbytes as bnb

    import grpo_runtime.model.loading

    seen = {}
    original = grpo_runtime.model.loading.load_policy

    def recording(config, tokenizer):
        seen["model"] = original(config, tokenizer)
        return seen["model"]

    monkeypatch.setattr("grpo_runtime.setup.load_policy", recording)
    quantised = (
        dict(load_in_4bit=True, bnb_4bit_quant_type="nf4", use_bnb_nested_quant=True)
        if bits == 4
        else dict(load_in_8bit=True)
    )
    out = run(tmp_path, tiny_model_dir, f"q{bits}", max_steps=2, activation_checkpointing=False, **quantised)
    model = seen["model"]
    q_proj = model.base_model.model.model.layers[0].self_attn.q_proj
    assert isinstance(q_proj.base_layer, bnb.nn.Linear4bit if bits == 4 else bnb.nn.Linear8bitLt)
    trainable = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n and p.dtype == torch.bfloat16 for n, p in trainable.items())
    adapter = load_file(str(out / "adapter_model.safetensors"))
    assert any(name.endswith("lora_B.weight") and value.abs().sum() > 0 for name, value in adapter.items())
