"""Each setting moves the part it should, by the amount the formulas say (fast, pure arithmetic)."""

from dataclasses import replace

import pytest

from grpo_schema.engine.hardware import parse_hardware
from grpo_schema.engine.hardware.catalogue import MODELS
from grpo_schema.engine.hardware.memory import GIB, Setup, estimate_memory
from grpo_schema.engine.hardware.timing import estimate_time

MODEL = MODELS["qwen2.5-7b"]
BASE = Setup(
    world_size=8,
    micro_batch=4,
    prompt_length=512,
    completion_length=1024,
    generation_rows=32,
    gradient_accumulation_steps=8,
)
CAPACITY = 80 * GIB


def parts(setup):
    return estimate_memory(MODEL, setup, CAPACITY)


def test_bf16_adamw_data_parallel_states():
    est = parts(BASE)
    N = MODEL.total_params()
    assert est.part("weights") == 2 * N and est.part("gradients") == 2 * N and est.part("optimizer") == 4 * N


def test_zero3_shards_everything_and_gathers_to_generate():
    est = parts(replace(BASE, strategy="zero3"))
    assert est.part("weights") < parts(BASE).part("weights") / 4
    assert est.part("gathered weights") > 0  # generation gathers the full model


def test_reference_model_only_with_beta_and_not_with_lora():
    assert parts(BASE).part("reference") == 0
    assert parts(replace(BASE, reference=True)).part("reference") == 2 * MODEL.total_params()
    lora = parts(replace(BASE, reference=True, use_peft=True, lora_r=16))
    assert lora.part("reference") == 0 and lora.part("optimizer") == 0 and lora.part("gradients") == 0
    assert 0 < lora.part("lora") < 0.01 * parts(BASE).part("optimizer")


def test_the_reference_is_partitioned_as_each_engine_places_it():
    # ZeRO-3: both engines partition it; FSDP: TRL shards it, grpo_runtime keeps a whole copy on every process
    whole = 2 * MODEL.total_params()
    for engine in ("trl", "grpo_runtime"):
        assert parts(replace(BASE, reference=True, strategy="zero3", engine=engine)).part("reference") == whole / 8
    assert parts(replace(BASE, reference=True, strategy="fsdp", engine="trl")).part("reference") == whole / 8
    assert parts(replace(BASE, reference=True, strategy="fsdp", engine="grpo_runtime")).part("reference") == whole


def test_checkpointing_cuts_activations():
    off = parts(replace(BASE, activation_checkpointing=False)).part("activations")
    on = parts(BASE).part("activations")
    assert off > 5 * on


def test_vllm_colocate_share_and_sleep_mode():
    colocate = parts(replace(BASE, use_vllm=True, vllm_memory_utilization=0.3))
    assert colocate.part("vllm") == pytest.approx(0.3 * CAPACITY)
    assert colocate.kv_cache_tokens > colocate.kv_cache_tokens_needed > 0
    asleep = parts(replace(BASE, use_vllm=True, vllm_sleep=True))
    assert [p.phase for p in asleep.parts if p.name == "vllm"] == ["generation"]
    assert asleep.total < colocate.total


def test_chunked_head_never_holds_the_full_logits():
    # TRL 1.16's fused head and grpo_runtime's chunked head: a fixed tile plus per-token and fp32 accumulators,
    # far below the [rows, C, V] logits, and growing only with the [N, H] parts when the batch doubles.
    from grpo_schema.engine.hardware.head_memory import (
        RUNTIME_BACKWARD_TILES,
        TRL_TOKEN_TILE,
        TRL_VOCAB_TILE,
        runtime_chunk_tokens,
    )

    N, H, V = BASE.micro_batch * BASE.completion_length, MODEL.hidden_size, MODEL.vocab_size
    vocab_grad = V * H * (4 + 2)  # fp32 accumulator and its bf16 cast
    full = N * V * 4
    for engine in ("trl", "grpo_runtime"):
        small = parts(replace(BASE, engine=engine)).part("logits")
        big = parts(replace(BASE, engine=engine, micro_batch=8)).part("logits")
        assert small - vocab_grad < full / 4 and small < big < 1.2 * small
    per_token = N * H * 2 + 8 * N * 4 + N * H * 4
    assert parts(BASE).part("logits") == TRL_TOKEN_TILE * TRL_VOCAB_TILE * 2 + per_token + vocab_grad
    runtime = parts(replace(BASE, engine="grpo_runtime")).part("logits")
    assert RUNTIME_BACKWARD_TILES == 2  # as memprobe measures the chunked head (tests/hardware/test_measured.py)
    assert runtime == RUNTIME_BACKWARD_TILES * runtime_chunk_tokens(V) * V * 4 + per_token + vocab_grad


def test_ddp_buckets_copy_the_gradients_unless_bucket_view():
    est = parts(BASE)
    assert est.part("ddp buckets") == 2 * MODEL.total_params()  # 14.2 GiB for a 7B model in bf16
    assert parts(replace(BASE, gradient_as_bucket_view=True)).part("ddp buckets") == 0
    assert parts(replace(BASE, world_size=1)).part("ddp buckets") == 0
    assert parts(replace(BASE, strategy="zero2")).part("ddp buckets") == 0


def test_no_autocast_copies_under_deepspeed():
    fp32 = replace(BASE, weight_bytes=4, compute_bytes=2, autocast=True)
    assert parts(fp32).part("autocast copies") > 0
    assert parts(replace(fp32, strategy="zero2")).part("autocast copies") == 0


def test_training_flops_are_about_six_n_per_token():
    from grpo_schema.engine.plan import RunPlan  # noqa: F401  (the plan is optional: without it one step is b x P)

    hw = parse_hardware("8xH100-80GB")
    t = estimate_time(MODEL, replace(BASE, activation_checkpointing=False), None, hw, 0.15, max_steps=500)
    tokens = BASE.micro_batch * BASE.world_size * BASE.sequence_length
    assert t.training_flops / tokens == pytest.approx(6 * MODEL.active_params(), rel=0.15)
    assert t.total_hours == pytest.approx(t.step_seconds * 500 / 3600)
