"""The processes of test_sharded_head.py: each joins a 2-process gloo group, shards a tiny model (FSDP2's
fully_shard or DeepSpeed ZeRO-3), and scores one batch (its own rows, so the ranks' gradients differ) through
completion_logps twice: the chunked head, then the full-logits path. It writes what it saw to
<out>/<case>-<rank>.json: the largest differences of the log-probs, entropies and whole reduced gradients between
the two paths, the paths counted, and the widest lm_head output of each pass."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch

from grpo_runtime.training import lm_head, logprobs

TEMPERATURE = 0.8
TOKENS_PER_CHUNK = 3  # several chunks per micro-batch, as with a real vocabulary


def build(tied: bool, vocab: int = 96, modules_to_save: bool = False):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)  # the same weights on every rank
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        tie_word_embeddings=tied,
        pad_token_id=0,
    )
    model = LlamaForCausalLM(config).train()
    if modules_to_save:  # LoRA on the projections, lm_head trained in full as a copy moved away from the original
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model,
            LoraConfig(
                r=2, target_modules=["q_proj"], modules_to_save=["lm_head"], lora_dropout=0.0, init_lora_weights=False
            ),
        )
        with torch.no_grad():
            model.get_base_model().lm_head.modules_to_save["default"].weight.add_(0.5)
        model.train()
    return model


def layers(model):
    return model.get_base_model().model.layers if hasattr(model, "get_base_model") else model.model.layers


def batch(vocab: int, rank: int, b: int = 3, p: int = 4, c: int = 7):
    gen = torch.Generator().manual_seed(100 + rank)
    prompt_ids = torch.randint(1, vocab, (b, p), generator=gen)
    prompt_mask = torch.ones(b, p, dtype=torch.long)
    prompt_mask[0, :2] = 0
    completion_ids = torch.randint(1, vocab, (b, c), generator=gen)
    completion_mask = torch.ones(b, c, dtype=torch.long)
    completion_mask[1, 4:] = 0
    weights = torch.randn(b, c, generator=gen)  # a loss that weighs every token differently
    return (prompt_ids, prompt_mask, completion_ids, completion_mask), weights


def widest_head_output(head: torch.nn.Module, seen: list):
    """Records the token width of every tensor lm_head returns ([b, kept, V] from the model's own call)."""

    def hook(module, args, output):
        if torch.is_tensor(output) and output.dim() == 3:
            seen.append(output.size(1))

    return head.register_forward_hook(hook)


def two_paths(model, head_module, vocab, rank, full_grads, zero_grads, backward=None, autocast=None):
    """{path: (logp, entropy, grads, widest lm_head output, counted)} for "chunked" and "full"."""
    tensors, weights = batch(vocab, rank)
    chosen = logprobs._chunkable
    result = {}
    for path in ("chunked", "full"):
        if path == "full":
            logprobs._chunkable = lambda model: None  # the full-logits path, for the reference numbers
        seen, before = [], dict(logprobs.HEAD_PATHS)
        handle = widest_head_output(head_module, seen)
        try:
            kwargs = {} if autocast is None else {"autocast": autocast}
            logp, entropy, _ = logprobs.completion_logps(model, *tensors, TEMPERATURE, **kwargs)
        finally:
            handle.remove()
            logprobs._chunkable = chosen
        loss = (logp * weights).sum() - 0.1 * entropy.sum()
        backward(loss) if backward is not None else loss.backward()
        counted = {k: logprobs.HEAD_PATHS[k] - before.get(k, 0) for k in ("chunked", "full")}
        result[path] = (logp.detach(), entropy.detach(), full_grads(), max(seen, default=0), counted)
        zero_grads()
    return result


def report(result) -> dict:
    (lc, ec, gc, wc, cc), (lf, ef, gf, wf, cf) = result["chunked"], result["full"]
    assert gc.keys() == gf.keys() and gc, "no gradients"
    return {
        "logp": (lc - lf).abs().max().item(),
        "entropy": (ec - ef).abs().max().item(),
        "grad": max((gc[k].float() - gf[k].float()).abs().max().item() for k in gc),
        "grad_scale": max(gf[k].float().abs().max().item() for k in gf),
        "lm_head_grad": (gc["lm_head.weight"].float() - gf["lm_head.weight"].float()).abs().max().item()
        if "lm_head.weight" in gc
        else None,
        "widest": {"chunked": wc, "full": wf},
        "counted": {"chunked": cc, "full": cf},
        "dtype": str(lc.dtype),
    }


def init(rank: int, world: int, port: int):
    import torch.distributed as dist

    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world),
    )
    torch.set_num_threads(1)
    lm_head.tokens_per_chunk = lambda vocab, tile_elements=0: TOKENS_PER_CHUNK
    if not dist.is_initialized():
        dist.init_process_group("gloo", rank=rank, world_size=world)


def fsdp2(rank: int, world: int, port: int, out: str, cases: list) -> None:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    init(rank, world, port)
    for case in cases:
        model = build(tied=case["tied"], modules_to_save=case.get("modules_to_save", False))
        vocab = model.config.vocab_size
        mp = MixedPrecisionPolicy()
        if case.get("bf16"):  # accelerate's policy for mixed_precision bf16
            mp = MixedPrecisionPolicy(
                param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, output_dtype=torch.bfloat16
            )
        for layer in layers(model):  # accelerate's TRANSFORMER_BASED_WRAP, then the root
            fully_shard(layer, reshard_after_forward=True, mp_policy=mp)
        fully_shard(model, reshard_after_forward=True, mp_policy=mp)
        head = model.get_output_embeddings()
        chunked = logprobs._chunkable(model) is not None

        def grads():
            return {name: p.grad.full_tensor() for name, p in model.named_parameters() if p.grad is not None}

        result = two_paths(model, head, vocab, rank, grads, lambda: model.zero_grad(set_to_none=True))
        summary = report(result)
        summary.update(chunkable=chunked, sharded=type(head.weight).__name__)
        Path(out, f"{case['name']}-{rank}.json").write_text(json.dumps(summary))


def zero3(rank: int, world: int, port: int, out: str, cases: list) -> None:
    import deepspeed
    from deepspeed.utils import safe_get_full_grad

    init(rank, world, port)
    deepspeed.init_distributed(dist_backend="gloo")
    for case in cases:
        model = build(tied=case["tied"], modules_to_save=case.get("modules_to_save", False))
        vocab = model.config.vocab_size
        config = {
            "train_micro_batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 1,
            # every parameter partitioned, however small, so the head's weight is never whole outside a gather
            "zero_optimization": {
                "stage": 3,
                "stage3_param_persistence_threshold": 0,
                "stage3_prefetch_bucket_size": 0,
            },
            "zero_allow_untested_optimizer": True,
        }
        optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.0)
        engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        head = engine.module.get_output_embeddings()
        chunked = logprobs._chunkable(engine) is not None
        partitioned = head.weight.numel() == 0  # outside a gather the parameter holds nothing

        def grads():  # the reduced (averaged over ranks) whole gradients, gathered from the partitions
            whole = {name: safe_get_full_grad(p) for name, p in engine.module.named_parameters()}
            return {name: g.clone() for name, g in whole.items() if g is not None}

        # engine.zero_grad() leaves the reduced partitions; the optimizer step (lr 0: the weights stay) clears them
        result = two_paths(engine, head, vocab, rank, grads, engine.step, backward=engine.backward)
        summary = report(result)
        summary.update(chunkable=chunked, partitioned=partitioned)
        Path(out, f"{case['name']}-{rank}.json").write_text(json.dumps(summary))
        engine.destroy()
