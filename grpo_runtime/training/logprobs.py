"""Per-token log-probs and entropies of completion tokens, with TRL 1.16's conventions.

* logits are divided by the sampling temperature (also for the old and reference policies);
* no `position_ids` are passed, so left-padded prompts get the model's default positions, as in TRL;
* padded completion positions (completion_mask == 0) get log-prob 0 and entropy 0;
* only the C last positions are scored, C = completion width.

Like TRL 1.16's fused LM head, the full [rows, C, vocab] logits are never held: the model's own forward runs with
`logits_to_keep=1` (one position per row), the trunk's last hidden states are taken from the backbone's output,
and the head is applied a chunk of tokens at a time (training/lm_head.py), also for a sharded head (FSDP2, ZeRO-3)
and for LoRA or modules_to_save on lm_head (training/head_site.py). Where that cannot reproduce the model's own
head (see `chunkable_head`), the full logits are computed as before.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import torch

from grpo_runtime.training import head_site
from grpo_runtime.training.lm_head import HeadMath, chunked_logps

# Config fields by which a model rescales its logits after the head in ways not reproduced here (Cohere's
# logit_scale, Granite's logits_scaling, Falcon-H1's lm_head_multiplier, ...): such models take the full-logits path.
UNHANDLED_SCALING = ("logit_scale", "logits_scaling", "output_multiplier", "lm_head_multiplier")

# completion_logps calls by the path taken ("chunked" / "full"), per process: the tests read it to know which ran
HEAD_PATHS: Counter = Counter()


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
    head = _chunkable(model)
    HEAD_PATHS["full" if head is None else "chunked"] += 1
    logps, entropies, router_losses = [], [], []
    for start in range(0, input_ids.size(0), step):
        rows = slice(start, start + step)
        args = (
            model,
            input_ids[rows],
            attention_mask[rows],
            completion_ids[rows],
            completion_mask[rows].bool(),
            temperature,
            with_entropy,
            autocast,
            with_router_loss,
        )
        logp, entropy, router_loss = _score_full(*args) if head is None else _score_chunked(head, *args)
        logps.append(logp)
        entropies.append(entropy)
        router_losses.append(router_loss)
    router_loss = torch.stack(router_losses).mean() if with_router_loss else None
    return torch.cat(logps), torch.cat(entropies) if with_entropy else None, router_loss


def _forward(model, input_ids, attention_mask, keep: int, with_router_loss: bool, autocast):
    extra = {"output_router_logits": True} if with_router_loss else {}
    with autocast():
        return model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep, **extra)


def _score_full(
    model, input_ids, attention_mask, completion_ids, active, temperature, with_entropy, autocast, with_router_loss
):
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


def _score_chunked(
    head: head_site.Head,
    model,
    input_ids,
    attention_mask,
    completion_ids,
    active,
    temperature,
    with_entropy,
    autocast,
    with_router_loss,
):
    """The chunked path: the model's forward through the wrapper (DDP, DeepSpeed, FSDP2, PEFT, router loss all as
    usual) with one kept logit per row, the backbone's hidden states captured on the way, then the head on active
    tokens only, where its weight is whole (training/head_site.py)."""
    base = _causal_lm(model)
    width = completion_ids.size(1)
    targets = completion_ids[active]  # [n]
    fsdp_root = head_site.fsdp_root(model)
    scored = {}

    def compute(hidden):  # hidden [n, H] -> (log-probs [n],) or (log-probs [n], entropies [n])
        weight, bias = head.weight_and_bias()  # read here: only here is a sharded weight whole
        math = _head_math(base, head.module, weight.dtype, temperature, hidden.device)
        with torch.autocast(hidden.device.type, enabled=False):  # the dtype is chosen by `math`, forward and backward
            logp, entropy = chunked_logps(hidden, weight, bias, targets, math, with_entropy)
        return (logp, entropy) if with_entropy else (logp,)

    def on_backbone(hidden_states):  # [b, P+C, H]
        scored["hidden"] = hidden = hidden_states[:, -width - 1 : -1][active]  # [n, H]: position t predicts t+1
        if head_site.zero3(head):  # inside the model's forward, so DeepSpeed's module order is the same each step
            scored["out"] = head_site.call_as_module(head.module, compute, hidden)

    with _captured_output(base.base_model, on_backbone):
        output = _forward(model, input_ids, attention_mask, 1, with_router_loss, autocast)
    if "out" not in scored:
        with autocast():
            if fsdp_root is not None:
                scored["out"] = head_site.call_in_fsdp_root(fsdp_root, lambda: compute(scored["hidden"]))
            else:
                scored["out"] = compute(scored["hidden"])
    hidden, out = scored["hidden"], scored["out"]
    # masked_scatter keeps the result attached to the graph even when no token is active
    logps = hidden.new_zeros(active.shape, dtype=torch.float32).masked_scatter(active, out[0])  # [b, C]
    entropies = None
    if with_entropy:
        entropies = hidden.new_zeros(active.shape, dtype=torch.float32).masked_scatter(active, out[1])
    return logps, entropies, output.aux_loss if with_router_loss else None


def _head_math(base, module, logits_dtype, temperature: float, device) -> HeadMath:
    """The head's dtype as the full path would run it: fp32 for cast_lm_head_to_fp32, else autocast's, else the
    weight's. For LoRA that is the effective weight's, the wider of the base's and the adapter's: peft adds an fp32
    adapter's term to a bf16 head's logits in fp32 and only then rounds to bf16, and projecting in fp32 comes
    closer to that than a bf16 projection of W + scale * B @ A (measured on the tiny model: 5e-3 against 2e-2 in
    the log-probs)."""
    fp32 = getattr(module, "grpo_fp32_head", False) or getattr(
        getattr(module, "base_layer", None), "grpo_fp32_head", False
    )
    if fp32:
        dtype = torch.float32
    elif torch.is_autocast_enabled(device.type):
        dtype = torch.get_autocast_dtype(device.type)
    else:
        dtype = logits_dtype
    softcap = getattr(base.config.get_text_config(), "final_logit_softcapping", None)
    return HeadMath(temperature=temperature, softcap=softcap, compute_dtype=dtype)


@contextlib.contextmanager
def _captured_output(module, receive):
    """Calls receive(last_hidden_state) at the end of `module`'s forward while in the context."""
    handle = module.register_forward_hook(lambda mod, args, out: receive(out[0]))
    try:
        yield
    finally:
        handle.remove()


def _causal_lm(model):
    """The transformers CausalLM under a DDP and/or PEFT wrapper."""
    model = getattr(model, "module", model)  # DDP
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def chunkable_head(model) -> bool:
    """Whether the chunked head reproduces the model's own head exactly (see `_chunkable`)."""
    return _chunkable(model) is not None


def _chunkable(model) -> head_site.Head | None:
    """The head to apply in chunks, or None for the full-logits path, which is taken when:
    * the head is neither a plain nn.Linear nor peft's LoRA / modules_to_save wrapper around one: a quantised head
      (bitsandbytes' layers subclass nn.Linear, hence exact type checks), or LoRA with an active dropout or a
      variant such as DoRA (head_site.resolve);
    * LoRA on lm_head under ZeRO-3 or FSDP2, or a head that is an FSDP2 unit of its own, or FSDP2 applied below a
      root that is not sharded (head_site);
    * the model rescales its logits in a way HeadMath does not reproduce, or has no separate backbone."""
    base = _causal_lm(model)
    module = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    head = head_site.resolve(module)
    if head is None or base.base_model is base:
        return None
    text_config = base.config.get_text_config()
    if any(getattr(text_config, name, None) not in (None, 1.0) for name in UNHANDLED_SCALING):
        return None
    if head_site.fsdp_elsewhere(model, base, module):
        return None
    sharded = head_site.zero3(head) or head_site.fsdp_root(model) is not None
    if sharded and head.lora:  # its three weights are gathered by three modules' hooks: not reproduced, full path
        return None
    return head
