"""Per-token log-probs and entropies of completion tokens, with TRL 1.16's conventions.

* logits are divided by the sampling temperature (also for the old and reference policies);
* no `position_ids` are passed, so left-padded prompts get the model's default positions, as in TRL;
* padded completion positions (completion_mask == 0) get log-prob 0 and entropy 0;
* only the C last positions are scored, C = completion width.

Like TRL 1.16's fused LM head, the full [rows, C, vocab] logits are never held: the model's own forward runs with
`logits_to_keep=1` (one position per row), the trunk's last hidden states are taken from the backbone's output,
and the head is applied a chunk of tokens at a time (training/lm_head.py). Where that cannot reproduce the model's
own head (see `chunkable_head`), the full logits are computed as before.
"""

from __future__ import annotations

import contextlib

import torch

from grpo_runtime.training.lm_head import HeadMath, chunked_logps

# Config fields by which a model rescales its logits after the head in ways not reproduced here (Cohere's
# logit_scale, Granite's logits_scaling, Falcon-H1's lm_head_multiplier, ...): such models take the full-logits path.
UNHANDLED_SCALING = ("logit_scale", "logits_scaling", "output_multiplier", "lm_head_multiplier")


def completion_logps(
    model,
    prompt_ids: torch.Tensor,  # [B, P] left-padded
    prompt_mask: torch.Tensor,  # [B, P]
    completion_ids: torch.Tensor,  # [B, C] right-padded
    completion_mask: torch.Tensor,  # [B, C]
    temperature: float,
    rows_per_chunk: int | None = None,
    with_entropy: bool = True,
    autocast=contextlib.nullcontext,
    with_router_loss: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """Log-prob of each completion token under `model`, the entropy of each next-token distribution and, for
    Mixture-of-Experts models when asked, the router load-balancing loss (mean over chunks).

    Rows are processed `rows_per_chunk` at a time (the trunk's activations), and within them tokens a chunk at a
    time through the head. Returns ([B, C], [B, C] or None, [] or None).
    """
    input_ids = torch.cat([prompt_ids, completion_ids], dim=1)  # [B, P+C]
    attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)  # [B, P+C]
    step = rows_per_chunk or input_ids.size(0)
    score = _score_chunked if chunkable_head(model) else _score_full
    logps, entropies, router_losses = [], [], []
    for start in range(0, input_ids.size(0), step):
        rows = slice(start, start + step)
        logp, entropy, router_loss = score(model, input_ids[rows], attention_mask[rows], completion_ids[rows],
                                           completion_mask[rows].bool(), temperature, with_entropy, autocast,
                                           with_router_loss)
        logps.append(logp)
        entropies.append(entropy)
        router_losses.append(router_loss)
    router_loss = torch.stack(router_losses).mean() if with_router_loss else None
    return torch.cat(logps), torch.cat(entropies) if with_entropy else None, router_loss


def _forward(model, input_ids, attention_mask, keep: int, with_router_loss: bool, autocast):
    extra = {"output_router_logits": True} if with_router_loss else {}
    with autocast():
        return model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep, **extra)


def _score_full(model, input_ids, attention_mask, completion_ids, active, temperature, with_entropy, autocast,
                with_router_loss):
    """The full-logits path: [b, C+1, V] logits from the model's own head."""
    width = completion_ids.size(1)
    output = _forward(model, input_ids, attention_mask, width + 1, with_router_loss, autocast)
    # the logit at position t predicts token t+1, so the first C of the C+1 kept positions score the completion
    scaled = output.logits[:, :-1, :].float() / temperature  # [b, C, V]
    log_softmax = torch.log_softmax(scaled, dim=-1)  # [b, C, V]
    token_logps = log_softmax.gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)  # [b, C]
    entropy = None
    if with_entropy:
        entropy = (-(log_softmax.exp() * log_softmax).sum(-1)).masked_fill(~active, 0.0)  # [b, C]
    return token_logps.masked_fill(~active, 0.0), entropy, output.aux_loss if with_router_loss else None


def _score_chunked(model, input_ids, attention_mask, completion_ids, active, temperature, with_entropy, autocast,
                   with_router_loss):
    """The chunked path: the model's forward through the wrapper (DDP, PEFT, router loss all as usual) with one
    kept logit per row, the backbone's hidden states captured on the way, then the head on active tokens only."""
    base = _causal_lm(model)
    width = completion_ids.size(1)
    with _captured_output(base.base_model) as captured:
        output = _forward(model, input_ids, attention_mask, 1, with_router_loss, autocast)
    hidden = captured["hidden"][:, -width - 1:-1]  # [b, C, H]: position t predicts token t+1
    head = base.get_output_embeddings()
    with autocast():
        math = _head_math(base, head, temperature, hidden.device)
    with torch.autocast(hidden.device.type, enabled=False):  # the dtype is chosen by `math`, in forward and backward
        logp, entropy = chunked_logps(hidden[active], head.weight, head.bias, completion_ids[active], math,
                                      with_entropy)  # [n], [n] or None
    # masked_scatter keeps the result attached to the graph even when no token is active
    logps = hidden.new_zeros(active.shape, dtype=torch.float32).masked_scatter(active, logp)  # [b, C]
    entropies = None
    if with_entropy:
        entropies = hidden.new_zeros(active.shape, dtype=torch.float32).masked_scatter(active, entropy)
    return logps, entropies, output.aux_loss if with_router_loss else None


def _head_math(base, head, temperature: float, device) -> HeadMath:
    """The head's dtype as the full path would run it: fp32 for cast_lm_head_to_fp32, else autocast's, else the
    weight's."""
    if getattr(head, "grpo_fp32_head", False):
        dtype = torch.float32
    elif torch.is_autocast_enabled(device.type):
        dtype = torch.get_autocast_dtype(device.type)
    else:
        dtype = head.weight.dtype
    softcap = getattr(base.config.get_text_config(), "final_logit_softcapping", None)
    return HeadMath(temperature=temperature, softcap=softcap, compute_dtype=dtype)


@contextlib.contextmanager
def _captured_output(module):
    """Yields a dict that holds `module`'s last_hidden_state after its next forward."""
    captured = {}
    handle = module.register_forward_hook(lambda mod, args, out: captured.__setitem__("hidden", out[0]))
    try:
        yield captured
    finally:
        handle.remove()


def _causal_lm(model):
    """The transformers CausalLM under a DDP and/or PEFT wrapper."""
    model = getattr(model, "module", model)  # DDP
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def chunkable_head(model) -> bool:
    """Whether the chunked head reproduces the model's own head exactly. It does not, and the full-logits path is
    taken, when:
    * the head is not a plain nn.Linear: a LoRA adapter or modules_to_save on lm_head (peft wraps it), or a
      quantised head (bitsandbytes' layers subclass nn.Linear, hence the exact type check);
    * the weight is sharded (FSDP2 DTensor, DeepSpeed ZeRO-3): it is only whole inside the head's own forward,
      and its gradient is reduced by the sharding framework's hooks there;
    * the model rescales its logits in a way HeadMath does not reproduce, or has no separate backbone."""
    base = _causal_lm(model)
    head = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    if type(head) is not torch.nn.Linear or base.base_model is base:
        return False
    if _sharded(model, base, head.weight):
        return False
    text_config = base.config.get_text_config()
    return all(getattr(text_config, name, None) in (None, 1.0) for name in UNHANDLED_SCALING)


def _sharded(model, base, weight) -> bool:
    from torch.distributed.tensor import DTensor

    if isinstance(weight, DTensor) or hasattr(weight, "ds_id"):
        return True
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # a torch without FSDP2
        return False
    # between a no-grad forward and the next backward FSDP2 may leave the root's weights unsharded (plain tensors)
    return isinstance(model, FSDPModule) or any(isinstance(m, FSDPModule) for m in base.modules())
