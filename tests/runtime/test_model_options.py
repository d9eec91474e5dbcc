"""Model-level options: the MoE router loss and cast_lm_head_to_fp32."""

import pytest
import torch

from grpo_runtime.model.loading import cast_lm_head_to_fp32
from tests.support.tiny import build_model, build_tokenizer

from .helpers import base_settings, read_metrics, validated, write_prompts


def test_cast_lm_head_to_fp32_gives_fp32_logits_under_bf16_autocast():
    model = build_model(build_tokenizer()).to(torch.bfloat16)
    cast_lm_head_to_fp32(model)
    ids = torch.tensor([[4, 5, 6]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(input_ids=ids).logits
    assert logits.dtype == torch.float32 and model.lm_head.weight.dtype == torch.float32
    assert model.get_input_embeddings().weight.dtype == torch.bfloat16


def tiny_moe(directory):
    from transformers import AutoModelForCausalLM, MixtralConfig

    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    config = MixtralConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        router_aux_loss_coef=0.02,
        pad_token_id=0,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.mark.slow
def test_moe_router_loss_is_added_and_logged(tmp_path):
    from grpo_runtime.train import main

    model_dir = tiny_moe(tmp_path / "moe")
    data = write_prompts(tmp_path / "data.jsonl")
    losses = {}
    for name, coefficient in (("with", 0.5), ("without", 0.0)):
        settings = base_settings(model_dir, data, tmp_path / name)
        settings.update(max_steps=1, router_aux_loss_coef=coefficient, gradient_accumulation_steps=2)
        result = validated(settings)
        main(result.config, result.plan)
        losses[name] = read_metrics(tmp_path / name)[0]
    assert "aux_loss" not in losses["without"] and losses["with"]["aux_loss"] > 0
    # same generations (same seed, nothing trained yet), so the losses differ by exactly the weighted router loss
    added = losses["with"]["loss"] - losses["without"]["loss"]
    assert added == pytest.approx(0.5 * losses["with"]["aux_loss"], abs=1e-6)


def test_router_loss_needs_a_moe_model(tmp_path, tiny_model_dir):
    from grpo_runtime.model.loading import router_loss_coefficient

    dense = build_model(build_tokenizer())
    config = validated(base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "o")).config
    assert router_loss_coefficient(config, dense) == 0.0
    asked = validated(
        {**base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "o"), "router_aux_loss_coef": 0.1}
    ).config
    with pytest.raises(ValueError, match="not a Mixture-of-Experts"):
        router_loss_coefficient(asked, dense)
