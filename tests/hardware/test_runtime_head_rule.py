"""The planner's copy of grpo_runtime's head rule (head_memory.RUNTIME_FULL_LOGITS) against the runtime's own
(training.logprobs.chunkable_head) on real models: plain, LoRA on the projections, LoRA on lm_head with and without
dropout, each with its adapters on (the policy) and off (a LoRA run's reference pass). The sharded cases are held by the ZeRO-3 calibration case (test_measured.py), which reports the path its
processes took."""

from types import SimpleNamespace

import pytest

from grpo_schema.engine.hardware.head_memory import RUNTIME_FULL_LOGITS, runtime_full_logits
from grpo_schema.engine.hardware.memory import Setup

torch = pytest.importorskip("torch", reason="the runtime's rule needs torch (the runtime extra)")
pytest.importorskip("peft", reason="the LoRA cases need peft")

TARGETS = [None, ("q_proj", "v_proj"), ("q_proj", "v_proj", "lm_head"), ("lm_head",)]


def tiny_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        tie_word_embeddings=False,
    )
    return LlamaForCausalLM(config)


def runtime_model(targets, dropout: float):
    from grpo_runtime.model.loading import wrap_lora

    model = tiny_model()
    if targets is not None:
        model = wrap_lora(
            model,
            SimpleNamespace(
                lora_task_type="CAUSAL_LM",
                lora_r=4,
                lora_alpha=8,
                lora_dropout=dropout,
                lora_target_modules=list(targets),
                use_rslora=False,
                use_dora=False,
                lora_modules_to_save=None,
                lora_target_parameters=None,
            ),
        )
    return model.train()  # the policy trains in train mode, where peft's dropout is active


@pytest.mark.parametrize("dropout", [0.0, 0.05])
@pytest.mark.parametrize("targets", TARGETS, ids=["plain", "projections", "projections+lm_head", "lm_head"])
def test_planner_rule_matches_chunkable_head(targets, dropout):
    from grpo_runtime.training.logprobs import chunkable_head

    setup = Setup(
        world_size=1,
        micro_batch=1,
        prompt_length=8,
        completion_length=8,
        generation_rows=1,
        engine="grpo_runtime",
        use_peft=targets is not None,
        lora_targets=targets,
        lora_dropout=dropout,
    )
    model = runtime_model(targets, dropout)
    assert chunkable_head(model) == (runtime_full_logits(setup) is None), (targets, dropout)
    if targets is not None:  # the reference pass of a LoRA run: the adapters disabled (model.loading)
        with model.disable_adapter():
            reference_chunked = chunkable_head(model)
        assert reference_chunked == (runtime_full_logits(setup, adapters=False) is None), (targets, dropout)


def test_rules_name_their_reason():
    # each rule the planner reports has its reason for the docs and the plan's note
    assert all(rule and len(reason) > 20 for rule, reason in RUNTIME_FULL_LOGITS)
    head_lora = Setup(
        world_size=2,
        micro_batch=1,
        prompt_length=8,
        completion_length=8,
        generation_rows=1,
        engine="grpo_runtime",
        use_peft=True,
        lora_targets=("lm_head",),
        lora_dropout=0.0,
        strategy="zero3",
    )
    assert runtime_full_logits(head_lora) == "adapted_sharded_head"
