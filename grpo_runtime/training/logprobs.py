"""Per-token log-probs and entropies of completion tokens, with TRL 1.16's conventions.

* logits are divided by the sampling temperature (also for the old and reference policies);
* no `position_ids` are passed, so left-padded prompts get the model's default positions, as in TRL;
* padded completion positions (completion_mask == 0) get log-prob 0 and entropy 0;
* only the C + 1 last logits are computed (`logits_to_keep`), C = completion width.
"""

from __future__ import annotations

import contextlib

import torch


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

    Rows are processed `rows_per_chunk` at a time to bound the memory of the logits.
    Returns ([B, C], [B, C] or None, [] or None).
    """
    input_ids = torch.cat([prompt_ids, completion_ids], dim=1)  # [B, P+C]
    attention_mask = torch.cat([prompt_mask, completion_mask], dim=1)  # [B, P+C]
    width = completion_ids.size(1)
    step = rows_per_chunk or input_ids.size(0)
    logps, entropies, router_losses = [], [], []
    extra = {"output_router_logits": True} if with_router_loss else {}
    for start in range(0, input_ids.size(0), step):
        rows = slice(start, start + step)
        with autocast():
            output = model(
                input_ids=input_ids[rows], attention_mask=attention_mask[rows], logits_to_keep=width + 1, **extra
            )
        logits = output.logits  # [b, C+1, V]
        if with_router_loss:
            router_losses.append(output.aux_loss)
        # the logit at position t predicts token t+1, so the first C of the C+1 kept positions score the completion
        scaled = logits[:, :-1, :].float() / temperature  # [b, C, V]
        log_softmax = torch.log_softmax(scaled, dim=-1)  # [b, C, V]
        active = completion_mask[rows].bool()  # [b, C]
        token_logps = log_softmax.gather(-1, completion_ids[rows].unsqueeze(-1)).squeeze(-1)  # [b, C]
        logps.append(token_logps.masked_fill(~active, 0.0))
        if with_entropy:
            entropy = -(log_softmax.exp() * log_softmax).sum(-1)  # [b, C]
            entropies.append(entropy.masked_fill(~active, 0.0))
    router_loss = torch.stack(router_losses).mean() if with_router_loss else None
    return torch.cat(logps), torch.cat(entropies) if with_entropy else None, router_loss
