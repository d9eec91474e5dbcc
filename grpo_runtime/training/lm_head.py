"""Per-token log-probs and entropies through the LM head, a chunk of tokens at a time.

The full logits of a completion batch are [tokens, vocab]: 8 x 1024 tokens x 151,936 vocab x 4 bytes = 5 GiB in
fp32, and log-softmax, its exponential and autograd's saved copies multiply that. Here the head is applied to
`chunk_tokens` tokens at a time: the forward keeps only two numbers per token (log-partition and entropy), and the
backward recomputes each chunk's logits to turn them into the gradient of the hidden states and of the weight.
Peak extra memory is a few [chunk_tokens, vocab] fp32 tiles plus, when the weight is trained, one fp32
[vocab, hidden] gradient accumulator, whatever the number of tokens.

The logits follow the model's own head: z = softcap(scale * (h @ W.T + b)) / temperature, with
softcap(x) = cap * tanh(x / cap) when the model declares `final_logit_softcapping` (Gemma 2 and 3), else x.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Elements of one [chunk_tokens, vocab] tile: 2**23 fp32 = 32 MiB, so a chunk holds 55 tokens of a 151,936 vocab.
# Measured on CPU (RSS, memprobe's Meter), with T = min(N, tokens_per_chunk(V)) and N scored tokens:
#   forward (no grad, e.g. old/reference log-probs):  2 * T * V * 4 bytes (the logits tile and one temporary)
#   forward + backward:  2 * T * V * 4 + V * H * 4 (fp32 weight-gradient accumulator) + N * H * 4 (hidden grad)
# e.g. N = 4096, V = 151,936, H = 64: 64 MiB forward, 102 MiB with the backward; N = 16,384: 105 MiB.
# A softcap (Gemma) adds one tile in the backward.
TILE_ELEMENTS = 1 << 23


def tokens_per_chunk(vocab: int, tile_elements: int = TILE_ELEMENTS) -> int:
    return max(1, tile_elements // vocab)


@dataclass(frozen=True)
class HeadMath:
    """How the head's raw projection becomes the sampled distribution's logits, and in which dtype it runs."""

    temperature: float = 1.0
    scale: float = 1.0  # multiplies the raw projection (1.0: none)
    softcap: float | None = None  # Gemma's final_logit_softcapping
    compute_dtype: torch.dtype | None = None  # dtype of the matmul (autocast's, or fp32 for cast_lm_head_to_fp32)

    def logits(self, raw: torch.Tensor) -> torch.Tensor:
        """raw [n, V] (a fresh tensor, any dtype) -> z [n, V] fp32, in place when raw is fp32."""
        z = raw.float()
        if self.scale != 1.0:
            z.mul_(self.scale)
        if self.softcap is not None:
            z.div_(self.softcap).tanh_().mul_(self.softcap)
        return z.div_(self.temperature)

    def raw_grad(self, z: torch.Tensor | None, grad_z: torch.Tensor) -> torch.Tensor:
        """d(loss)/d(raw) [n, V] from d(loss)/dz, in place on grad_z; z [n, V] is only read with a softcap."""
        grad_z.div_(self.temperature)
        if self.softcap is not None:
            # z * T = cap * tanh(u): d(cap * tanh(u)) / d(raw * scale) = 1 - tanh(u)**2 = 1 - (z * T / cap)**2
            tanh = z.mul_(self.temperature / self.softcap)
            grad_z.mul_(tanh.square_().neg_().add_(1.0))
        if self.scale != 1.0:
            grad_z.mul_(self.scale)
        return grad_z


def _project(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """hidden [n, H] @ weight.T [H, V] (+ bias [V]) -> [n, V] in the inputs' dtype."""
    return torch.nn.functional.linear(hidden, weight, bias)


def _rowdot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sum_v a[i, v] * b[i, v] -> [n], as a batched matmul so no [n, V] product is allocated."""
    return torch.bmm(a.unsqueeze(1), b.unsqueeze(-1)).view(-1)


class ChunkedHead(torch.autograd.Function):
    """(log p(target), entropy) per token of hidden [N, H] under weight [V, H] and bias [V], never holding [N, V].

    Saved for the backward: the inputs and two fp32 numbers per token (log-partition log Z and entropy).
    """

    @staticmethod
    def forward(ctx, hidden, weight, bias, targets, math: HeadMath, chunk_tokens: int, with_entropy: bool):
        # entropy is often only read (logging, the high-entropy token mask): no gradient comes, nothing to do for it
        ctx.set_materialize_grads(False)
        dtype = math.compute_dtype or hidden.dtype
        weight_c = weight.to(dtype)  # one cast for all chunks (a no-op when the dtypes match)
        bias_c = None if bias is None else bias.to(dtype)
        n = hidden.size(0)
        log_z = hidden.new_zeros(n, dtype=torch.float32)  # [N]
        entropy = hidden.new_zeros(n, dtype=torch.float32)  # [N]
        target_logp = hidden.new_zeros(n, dtype=torch.float32)  # [N]
        for start in range(0, n, chunk_tokens):
            rows = slice(start, start + chunk_tokens)
            z = math.logits(_project(hidden[rows].to(dtype), weight_c, bias_c))  # [n, V]
            log_z[rows] = torch.logsumexp(z, dim=-1)
            log_p = z.sub_(log_z[rows].unsqueeze(-1))  # [n, V] log-softmax, in z's memory
            target_logp[rows] = log_p.gather(-1, targets[rows].unsqueeze(-1)).squeeze(-1)
            if with_entropy:
                entropy[rows] = -_rowdot(log_p.exp(), log_p)  # H = -sum_v p_v log p_v
            del z, log_p
        ctx.save_for_backward(hidden, weight, bias, targets, log_z, entropy)
        ctx.math, ctx.chunk_tokens, ctx.dtype = math, chunk_tokens, dtype
        return target_logp, (entropy if with_entropy else None)

    @staticmethod
    def backward(ctx, grad_logp, grad_entropy):
        hidden, weight, bias, targets, log_z, entropy = ctx.saved_tensors
        math, dtype = ctx.math, ctx.dtype
        need_hidden, need_weight, need_bias = ctx.needs_input_grad[:3]
        weight_c = weight.to(dtype)
        bias_c = None if bias is None else bias.to(dtype)
        # fp32 accumulators, so summing many chunks does not round in bf16
        grad_hidden = torch.zeros_like(hidden, dtype=torch.float32) if need_hidden else None
        grad_weight = torch.zeros_like(weight, dtype=torch.float32) if need_weight else None
        grad_bias = torch.zeros_like(bias, dtype=torch.float32) if need_bias else None
        for start in range(0, hidden.size(0), ctx.chunk_tokens):
            rows = slice(start, start + ctx.chunk_tokens)
            h = hidden[rows].to(dtype)  # [n, H]
            z = math.logits(_project(h, weight_c, bias_c))  # [n, V]
            kept = z.clone() if math.softcap is not None else None  # the softcap's derivative reads z
            grad_raw = math.raw_grad(
                kept,
                _logits_grad(
                    z,
                    log_z[rows],
                    entropy[rows],
                    targets[rows],
                    None if grad_logp is None else grad_logp[rows],
                    None if grad_entropy is None else grad_entropy[rows],
                ),
            )  # [n, V] fp32
            del z, kept
            if grad_hidden is not None:
                grad_hidden[rows] = grad_raw.to(dtype) @ weight_c  # [n, H], in the head's dtype as autograd would
            if grad_weight is not None:
                grad_weight.addmm_(grad_raw.t(), h.float())  # [V, H]
            if grad_bias is not None:
                grad_bias += grad_raw.sum(0)
            del grad_raw
        return (_cast(grad_hidden, hidden), _cast(grad_weight, weight), _cast(grad_bias, bias), None, None, None, None)


def _logits_grad(z, log_z, entropy, targets, grad_logp, grad_entropy) -> torch.Tensor:
    """d(loss)/dz [n, V] for z [n, V] fp32 (overwritten), from the gradients of log p(target) and of the entropy,
    each [n] or None.

    d log p_t / dz_j = [j = t] - p_j ;  d H / dz_j = -p_j (log p_j + H).
    """
    log_p = z.sub_(log_z.unsqueeze(-1))  # [n, V]
    probs = log_p.exp()  # [n, V]
    if grad_entropy is not None:
        # -p_j (log p_j + H) g_H, written into log_p's memory
        grad = log_p.add_(entropy.unsqueeze(-1)).mul_(probs).mul_(-grad_entropy.unsqueeze(-1).float())
    else:
        grad = log_p.zero_()
    if grad_logp is not None:
        grad_logp = grad_logp.unsqueeze(-1).float()
        grad.sub_(probs.mul_(grad_logp))
        grad.scatter_add_(-1, targets.unsqueeze(-1), grad_logp)
    return grad


def _cast(grad: torch.Tensor | None, like: torch.Tensor | None) -> torch.Tensor | None:
    return None if grad is None else grad.to(like.dtype)


def chunked_logps(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    targets: torch.Tensor,
    math: HeadMath,
    with_entropy: bool = True,
    chunk_tokens: int | None = None,
):
    """hidden [N, H], weight [V, H], bias [V] or None, targets [N] -> (log-probs [N], entropies [N] or None), fp32."""
    chunk = chunk_tokens or tokens_per_chunk(weight.size(0))
    return ChunkedHead.apply(hidden, weight, bias, targets, math, chunk, with_entropy)
