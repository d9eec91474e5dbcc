"""The chunked LM head (grpo_runtime/training/lm_head.py) and completion_logps on top of it: hand-checked numbers,
equality with the full logits and with TRL 1.16's fused head, the fallbacks, and that no [tokens, vocab] tensor is
kept for the backward."""

import copy
import math

import pytest
import torch

from grpo_runtime.training import logprobs
from grpo_runtime.training.lm_head import HeadMath, chunked_logps, tokens_per_chunk

TOL = 1e-5
# Gradients of the weights sum over every position and vocabulary row, to values near 10: float32 rounding in
# another summation order (chunks, threads) reaches 1e-5 there, so they are compared relatively as well.
GRAD_RTOL = 1e-5


def full_head(hidden, weight, bias, targets, temperature=1.0, softcap=None):
    """The reference: the whole [N, V] logits through autograd."""
    z = torch.nn.functional.linear(hidden, weight, bias)
    if softcap is not None:
        z = softcap * torch.tanh(z / softcap)
    log_softmax = torch.log_softmax(z / temperature, dim=-1)
    return log_softmax.gather(-1, targets[:, None])[:, 0], -(log_softmax.exp() * log_softmax).sum(-1)


def test_two_token_vocabulary_by_hand():
    # logits [0, ln 3]: p = [1/4, 3/4]
    hidden = torch.tensor([[1.0]], requires_grad=True)
    weight = torch.tensor([[0.0], [math.log(3.0)]], requires_grad=True)
    logp, entropy = chunked_logps(hidden, weight, None, torch.tensor([1]), HeadMath())
    assert logp.item() == pytest.approx(math.log(0.75), abs=1e-6)
    assert entropy.item() == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)), abs=1e-6)
    # d log p_1 / dh = sum_j ([j = 1] - p_j) W_j = (0 - 1/4) * 0 + (1 - 3/4) * ln 3
    logp.sum().backward()
    assert hidden.grad.item() == pytest.approx(math.log(3.0) / 4, abs=1e-6)
    # d log p_1 / dW_j = ([j = 1] - p_j) h: [-1/4, 1/4]
    assert weight.grad[:, 0].tolist() == pytest.approx([-0.25, 0.25], abs=1e-6)


def test_temperature_two_by_hand():
    # logits [0, ln 3] / 2 = [0, ln sqrt 3]: p_1 = sqrt 3 / (1 + sqrt 3)
    weight = torch.tensor([[0.0], [math.log(3.0)]])
    logp, _ = chunked_logps(torch.ones(1, 1), weight, None, torch.tensor([1]), HeadMath(temperature=2.0))
    assert logp.item() == pytest.approx(math.log(3**0.5 / (1 + 3**0.5)), abs=1e-6)


def test_chunk_size_follows_the_vocabulary():
    assert tokens_per_chunk(151_936) == 55  # 2**23 elements per tile
    assert tokens_per_chunk(10**9) == 1


@pytest.mark.parametrize("softcap", [None, 3.0])
@pytest.mark.parametrize("with_bias", [False, True])
def test_values_and_gradients_equal_the_full_logits(softcap, with_bias):
    gen = torch.Generator().manual_seed(0)
    n, h, v = 11, 8, 37
    hidden = torch.randn(n, h, generator=gen, requires_grad=True)
    weight = torch.randn(v, h, generator=gen, requires_grad=True)
    bias = torch.randn(v, generator=gen, requires_grad=True) if with_bias else None
    targets = torch.randint(0, v, (n,), generator=gen)
    g_logp, g_entropy = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    inputs = [x for x in (hidden, weight, bias) if x is not None]

    # 4 tokens per chunk: 11 tokens make two full chunks and a partial one
    ours = chunked_logps(hidden, weight, bias, targets, HeadMath(temperature=0.7, softcap=softcap), chunk_tokens=4)
    reference = full_head(hidden, weight, bias, targets, 0.7, softcap)
    for a, b in zip(ours, reference):
        torch.testing.assert_close(a, b, atol=TOL, rtol=0)
    grads = torch.autograd.grad((ours[0] * g_logp + ours[1] * g_entropy).sum(), inputs)
    expected = torch.autograd.grad((reference[0] * g_logp + reference[1] * g_entropy).sum(), inputs)
    for a, b in zip(grads, expected):
        torch.testing.assert_close(a, b, atol=TOL, rtol=0)


def test_a_read_only_entropy_gets_no_gradient_work():
    hidden = torch.randn(5, 4, requires_grad=True)
    weight = torch.randn(9, 4)
    targets = torch.randint(0, 9, (5,))
    logp, _entropy = chunked_logps(hidden, weight, None, targets, HeadMath(), chunk_tokens=2)
    (grad,) = torch.autograd.grad(logp.sum(), [hidden])
    expected = torch.autograd.grad(full_head(hidden, weight, None, targets)[0].sum(), [hidden])[0]
    torch.testing.assert_close(grad, expected, atol=TOL, rtol=0)


@pytest.mark.oracle
def test_equals_trl_fused_head_function_with_temperature_and_mask():
    """TRL 1.16's ChunkedLogProbFunction (what add_fused_lm_head calls) on the same hidden states and weight, with
    the padded positions removed by a mask as TRL's compact path does."""
    from trl.kernels.chunked_logprob import ChunkedLogProbFunction

    gen = torch.Generator().manual_seed(1)
    b, c, h, v = 3, 6, 16, 300
    hidden = torch.randn(b, c, h, generator=gen)
    weight = torch.randn(v, h, generator=gen) * 0.3
    bias = torch.randn(v, generator=gen)
    targets = torch.randint(0, v, (b, c), generator=gen)
    mask = torch.ones(b, c, dtype=torch.bool)
    mask[0, 4:] = False
    mask[2, 1:] = False

    def run(fn):
        hid, w, bb = (x.clone().requires_grad_() for x in (hidden, weight, bias))
        logp, entropy = fn(hid[mask], w, bb, targets[mask])
        (logp * 0.5 - entropy * 0.3).sum().backward()
        return logp, entropy, hid.grad, w.grad, bb.grad

    ours = run(lambda *x: chunked_logps(*x, HeadMath(temperature=0.6), chunk_tokens=3))
    trl = run(lambda *x: ChunkedLogProbFunction.apply(*x, 0.6, 128, None, 1.0, ("log_probs", "entropy"))[:2])
    for a, t in zip(ours, trl):
        torch.testing.assert_close(a, t, atol=TOL, rtol=0)


# -- completion_logps on real models ----------------------------------------------------------------------------


def batch(vocab, b=3, p=4, c=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    prompt_ids = torch.randint(1, vocab, (b, p), generator=gen)
    prompt_mask = torch.ones(b, p, dtype=torch.long)
    prompt_mask[0, :2] = 0  # left padding
    completion_ids = torch.randint(1, vocab, (b, c), generator=gen)
    completion_mask = torch.ones(b, c, dtype=torch.long)
    completion_mask[1, 3:] = 0  # right padding
    return prompt_ids, prompt_mask, completion_ids, completion_mask


def from_model_logits(model, prompt_ids, prompt_mask, completion_ids, completion_mask, temperature):
    """Log-probs and entropies from the model's own logits (its own head, softcapping and all)."""
    ids = torch.cat([prompt_ids, completion_ids], 1)
    logits = model(input_ids=ids, attention_mask=torch.cat([prompt_mask, completion_mask], 1)).logits
    log_softmax = torch.log_softmax(logits[:, -completion_ids.size(1) - 1 : -1].float() / temperature, -1)
    active = completion_mask.bool()
    logp = log_softmax.gather(-1, completion_ids[..., None])[..., 0].masked_fill(~active, 0)
    return logp, (-(log_softmax.exp() * log_softmax).sum(-1)).masked_fill(~active, 0)


def assert_matches_model(model, temperature=0.8, **kwargs):
    tensors = batch(model.config.vocab_size)
    logp, entropy, _ = logprobs.completion_logps(model, *tensors, temperature, **kwargs)
    ref_logp, ref_entropy = from_model_logits(model, *tensors, temperature)
    torch.testing.assert_close(logp, ref_logp, atol=TOL, rtol=0)
    torch.testing.assert_close(entropy, ref_entropy, atol=TOL, rtol=0)
    trained = [p for p in model.parameters() if p.requires_grad]
    weight_grads = torch.autograd.grad((logp - 0.1 * entropy).sum(), trained, allow_unused=True)
    ref_grads = torch.autograd.grad((ref_logp - 0.1 * ref_entropy).sum(), trained, allow_unused=True)
    for a, b in zip(weight_grads, ref_grads):
        if b is not None:
            torch.testing.assert_close(a, b, atol=TOL, rtol=GRAD_RTOL)


def assert_values_match(model, temperature=0.8):
    """Log-probs and entropies only (where no parameter in use is trained)."""
    tensors = batch(model.config.vocab_size)
    logp, entropy, _ = logprobs.completion_logps(model, *tensors, temperature)
    ref_logp, ref_entropy = from_model_logits(model, *tensors, temperature)
    torch.testing.assert_close(logp, ref_logp, atol=TOL, rtol=0)
    torch.testing.assert_close(entropy, ref_entropy, atol=TOL, rtol=0)
    return logp


def test_tiny_qwen2_takes_the_chunked_path_and_matches_its_logits(tiny_policy):
    model, _ = tiny_policy
    assert logprobs.chunkable_head(model)
    assert_matches_model(model, rows_per_chunk=2)


@pytest.mark.oracle
def test_tiny_model_equals_trl_add_fused_lm_head(tiny_policy):
    """completion_logps against TRL 1.16's patched forward (add_fused_lm_head) on a copy of the same model."""
    from trl.trainer.utils import add_fused_lm_head

    model, _ = tiny_policy
    trl_model = copy.deepcopy(model)
    add_fused_lm_head(trl_model, temperature=0.7, outputs=("log_probs", "entropy"))
    prompt_ids, prompt_mask, completion_ids, completion_mask = batch(model.config.vocab_size)
    ids, mask = torch.cat([prompt_ids, completion_ids], 1), torch.cat([prompt_mask, completion_mask], 1)
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, : prompt_ids.size(1)] = -100
    trl = trl_model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    logp, entropy, _ = logprobs.completion_logps(model, prompt_ids, prompt_mask, completion_ids, completion_mask, 0.7)
    c = completion_ids.size(1)
    torch.testing.assert_close(logp, trl.log_probs[:, -c:], atol=TOL, rtol=0)
    torch.testing.assert_close(entropy, trl.entropy[:, -c:], atol=TOL, rtol=0)


def test_no_tokens_by_vocab_tensor_is_saved_for_backward():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    # a vocabulary much wider than the trunk, as in real models, so the head's tensors are the largest
    config = Qwen2Config(
        vocab_size=4096,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    model = Qwen2ForCausalLM(config)
    tensors = batch(config.vocab_size, b=4, c=8)
    weights = {p.data_ptr() for p in model.parameters()}
    sizes = []

    def pack(t):  # the activations autograd keeps, the weights aside
        if t.data_ptr() not in weights:
            sizes.append(t.numel())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logprobs.completion_logps(model, *tensors, 1.0)
    # the full path saves its [b, C, V] log-softmax; the chunked one only the head's one kept logit per row
    assert max(sizes) <= 4 * config.vocab_size < 4 * 8 * config.vocab_size


def test_gemma_softcapping_is_reproduced():
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(0)
    config = Gemma2Config(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        final_logit_softcapping=2.0,
        attn_implementation="eager",
    )
    model = Gemma2ForCausalLM(config).float()
    assert logprobs.chunkable_head(model)
    assert_matches_model(model)


def test_cast_lm_head_to_fp32_projects_in_fp32():
    """A bf16 model under cast_lm_head_to_fp32: the chunked head also projects in fp32, so it agrees with the
    full path to fp32 precision, not bf16's."""
    from grpo_runtime.model.loading import cast_lm_head_to_fp32
    from tests.support.tiny import build_model, build_tokenizer

    model = build_model(build_tokenizer()).to(torch.bfloat16)
    cast_lm_head_to_fp32(model)
    assert_matches_model(model)


def test_mixture_of_experts_router_loss_is_the_models_own():
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    torch.manual_seed(0)
    config = Qwen2MoeConfig(
        vocab_size=40,
        hidden_size=16,
        intermediate_size=32,
        moe_intermediate_size=8,
        shared_expert_intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_experts=4,
        num_experts_per_tok=2,
    )
    model = Qwen2MoeForCausalLM(config)
    tensors = batch(config.vocab_size)
    _, _, router_loss = logprobs.completion_logps(model, *tensors, 1.0, rows_per_chunk=2, with_router_loss=True)
    ids, mask = torch.cat(tensors[:3:2], 1), torch.cat(tensors[1::2], 1)
    expected = torch.stack(
        [
            model(input_ids=ids[r], attention_mask=mask[r], output_router_logits=True).aux_loss
            for r in (slice(0, 2), slice(2, 3))
        ]
    ).mean()
    torch.testing.assert_close(router_loss, expected, atol=TOL, rtol=0)
    assert_matches_model(model)


def test_lora_on_other_modules_keeps_the_chunked_head(tiny_policy):
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        copy.deepcopy(tiny_policy[0]),
        LoraConfig(r=2, target_modules=["q_proj", "v_proj"], lora_dropout=0.0, init_lora_weights=False),
    )
    assert logprobs.chunkable_head(model)
    assert_matches_model(model)


def lora_model(tiny_policy, **lora):
    from peft import LoraConfig, get_peft_model

    settings = dict(r=2, target_modules=["q_proj", "lm_head"], lora_dropout=0.0, init_lora_weights=False)
    settings.update(lora)
    return get_peft_model(copy.deepcopy(tiny_policy[0]), LoraConfig(**settings))


@pytest.mark.parametrize("lora_bias", [False, True])
def test_lora_on_lm_head_is_chunked_and_matches_its_logits(tiny_policy, lora_bias):
    """The chunked head on W + scale * B @ A (and the scaled B bias): values and the gradients of A and B (the
    trained parameters) equal those through peft's own forward and the full logits."""
    model = lora_model(tiny_policy, lora_bias=lora_bias, lora_alpha=6)  # scale 3: a wrong scale would show
    head = model.get_base_model().lm_head
    assert head.scaling["default"] == 3.0 and (head.lora_B["default"].bias is not None) == lora_bias
    if lora_bias:  # the base head has no bias of its own: give it one, so the two biases add
        with torch.no_grad():
            head.lora_B["default"].bias.normal_()
    assert logprobs.chunkable_head(model)
    before = logprobs.HEAD_PATHS["chunked"]
    assert_matches_model(model, rows_per_chunk=2)
    assert logprobs.HEAD_PATHS["chunked"] == before + 1
    assert any("lm_head.lora_B" in name for name, p in model.named_parameters() if p.requires_grad)


def test_two_active_lora_adapters_on_lm_head_add_up(tiny_policy):
    from peft import LoraConfig

    model = lora_model(tiny_policy)
    model.add_adapter("second", LoraConfig(r=3, target_modules=["lm_head"], lora_dropout=0.0, init_lora_weights=False))
    model.base_model.set_adapter(["default", "second"])
    assert model.get_base_model().lm_head.active_adapters == ["default", "second"]
    assert logprobs.chunkable_head(model)
    assert_matches_model(model)


def test_lora_dropout_on_lm_head_keeps_the_full_logits(tiny_policy):
    """peft computes base(x) + B(A(dropout(x))) * scale: with an active dropout that is no weight sum."""
    model = lora_model(tiny_policy, lora_dropout=0.1)
    assert not logprobs.chunkable_head(model)
    before = logprobs.HEAD_PATHS["full"]
    logprobs.completion_logps(model, *batch(model.config.vocab_size), 1.0)
    assert logprobs.HEAD_PATHS["full"] == before + 1
    with model.disable_adapter():  # the reference policy under PEFT: peft calls the base layer alone, so can we
        assert logprobs.chunkable_head(model)
        assert_values_match(model)
    model.eval()  # the dropout is then the identity: chunked again
    assert logprobs.chunkable_head(model)


def test_a_merged_lora_on_lm_head_is_the_base_layer(tiny_policy):
    model = lora_model(tiny_policy)
    tensors = batch(model.config.vocab_size)
    unmerged = logprobs.completion_logps(model, *tensors, 1.0)[0]
    model.merge_adapter()  # W += scale * B @ A, and peft's forward calls the base layer alone
    head = logprobs._chunkable(model)
    assert head is not None and not head.lora and head.module is model.get_base_model().lm_head.base_layer
    assert_values_match(model)
    torch.testing.assert_close(logprobs.completion_logps(model, *tensors, 1.0)[0], unmerged, atol=TOL, rtol=0)


def test_dora_on_lm_head_keeps_the_full_logits(tiny_policy):
    model = lora_model(tiny_policy, use_dora=True)
    assert not logprobs.chunkable_head(model)


def modules_to_save_model(tiny_policy):
    """modules_to_save on lm_head, the trained copy moved away from the original so that using the wrong one shows."""
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        copy.deepcopy(tiny_policy[0]),
        LoraConfig(
            r=2, target_modules=["q_proj"], modules_to_save=["lm_head"], lora_dropout=0.0, init_lora_weights=False
        ),
    )
    with torch.no_grad():
        model.get_base_model().lm_head.modules_to_save["default"].weight.add_(0.5)
    return model


def test_modules_to_save_on_lm_head_is_chunked_and_uses_the_trained_copy(tiny_policy):
    model = modules_to_save_model(tiny_policy)
    wrapper = model.get_base_model().lm_head
    assert logprobs.chunkable_head(model)
    assert wrapper.modules_to_save["default"].weight.requires_grad
    assert not wrapper.original_module.weight.requires_grad
    assert_matches_model(model)  # compares the copy's weight gradient too
    with model.disable_adapter():  # the reference policy under PEFT: the original head
        assert logprobs.chunkable_head(model)
        tensors = batch(model.config.vocab_size)
        logp, _, _ = logprobs.completion_logps(model, *tensors, 0.8)
        torch.testing.assert_close(logp, from_model_logits(model, *tensors, 0.8)[0], atol=TOL, rtol=0)
    assert (logp - logprobs.completion_logps(model, *tensors, 0.8)[0]).abs().max() > 1e-3  # the two heads differ


@pytest.mark.oracle
def test_modules_to_save_equals_trl_add_fused_lm_head(tiny_policy):
    """TRL 1.16's fused head reads lm_head.weight, which peft's ModulesToSaveWrapper forwards to the active copy.
    (A LoRA adapter on lm_head has no TRL oracle: GRPOTrainer refuses it, and the fused head would read the base
    weight only.)"""
    from trl.trainer.utils import add_fused_lm_head

    model = modules_to_save_model(tiny_policy)
    trl_model = copy.deepcopy(model)
    add_fused_lm_head(trl_model.get_base_model(), temperature=0.7, outputs=("log_probs", "entropy"))
    prompt_ids, prompt_mask, completion_ids, completion_mask = batch(model.config.vocab_size)
    ids, mask = torch.cat([prompt_ids, completion_ids], 1), torch.cat([prompt_mask, completion_mask], 1)
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, : prompt_ids.size(1)] = -100
    trl = trl_model.get_base_model()(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    logp, entropy, _ = logprobs.completion_logps(model, prompt_ids, prompt_mask, completion_ids, completion_mask, 0.7)
    c = completion_ids.size(1)
    torch.testing.assert_close(logp, trl.log_probs[:, -c:], atol=TOL, rtol=0)
    torch.testing.assert_close(entropy, trl.entropy[:, -c:], atol=TOL, rtol=0)


def test_a_rescaling_model_falls_back(tiny_policy):
    model = copy.deepcopy(tiny_policy[0])
    model.config.logits_scaling = 4.0  # Granite-style: the model divides its logits, which HeadMath does not do
    assert not logprobs.chunkable_head(model)


def test_calling_the_head_as_a_module_runs_its_hooks_and_keeps_its_own_forward():
    """ZeRO-3's path (head_site.call_as_module): the module's hooks wrap the chunked head as they wrap its own
    forward (DeepSpeed gathers there), and an instance forward (cast_lm_head_to_fp32's) is put back after."""
    from grpo_runtime.training import head_site

    head = torch.nn.Linear(4, 9)
    own = head.forward = lambda x: "own"
    calls = []
    head.register_forward_pre_hook(lambda module, args: calls.append(("pre", tuple(args[0].shape))))
    head.register_forward_hook(lambda module, args, out: calls.append(("post", len(out))))
    hidden, targets = torch.randn(5, 4), torch.randint(0, 9, (5,))
    out = head_site.call_as_module(
        head, lambda h: chunked_logps(h, head.weight, head.bias, targets, HeadMath()), hidden
    )
    assert calls == [("pre", (5, 4)), ("post", 2)]
    torch.testing.assert_close(out[0], full_head(hidden, head.weight, head.bias, targets)[0], atol=TOL, rtol=0)
    assert head.forward is own
    del head.forward
    head_site.call_as_module(head, lambda h: (h,), hidden)
    assert "forward" not in head.__dict__  # the class's forward again


def test_lora_on_a_bf16_lm_head_agrees_with_peft_to_bf16_rounding(tiny_policy):
    """peft keeps the adapter in fp32 on a bf16 model, adds its term to the bf16 base logits in fp32 and rounds the
    sum to bf16; the chunked head projects through W + scale * B @ A in fp32 (the wider dtype), which differs from
    that by the bf16 rounding of the logits only (a bf16 projection of the sum would be ~4x further off)."""
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        copy.deepcopy(tiny_policy[0]).to(torch.bfloat16),
        LoraConfig(r=2, target_modules=["lm_head"], lora_dropout=0.0, init_lora_weights=False),
    )
    head = model.get_base_model().lm_head
    assert head.lora_A["default"].weight.dtype == torch.float32 and head.base_layer.weight.dtype == torch.bfloat16
    assert logprobs.chunkable_head(model)
    tensors = batch(model.config.vocab_size)
    logp, entropy, _ = logprobs.completion_logps(model, *tensors, 1.0)
    ref_logp, ref_entropy = from_model_logits(model, *tensors, 1.0)
    torch.testing.assert_close(logp, ref_logp, atol=1e-2, rtol=0)  # 5e-3 measured
    torch.testing.assert_close(entropy, ref_entropy, atol=1e-2, rtol=0)
    weight, _ = logprobs._chunkable(model).weight_and_bias()
    assert weight.dtype == torch.float32
