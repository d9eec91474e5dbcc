"""One case's parts, step by step, in the order a run builds and uses them: the policy's weights, the reference, the
no-grad log-prob pass, the optimizer (and under ZeRO-3 DeepSpeed's states), the trunk's activations, then a window
of micro-steps for the gradients, the optimizer states and the step's peak."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from grpo_runtime.memprobe.colocate import prepare_vllm, vllm_engine
from grpo_runtime.memprobe.meter import Meter
from grpo_runtime.memprobe.models import build, policy, reference
from grpo_runtime.memprobe.zero3 import zero3_accelerator, zero3_window
from grpo_runtime.training.logprobs import _causal_lm, chunkable_head, completion_logps
from grpo_runtime.training.optim import build_optimizer


def measure(case: dict, device: str = "cpu") -> dict:
    """Every part of one case, in bytes."""
    dtype = getattr(torch, case.get("dtype", "float32"))
    meter = Meter(device)
    args = random_batch(case, device)
    out: dict[str, int] = {}
    warm_up(args, device, dtype)
    meter.hold_mapped_pages()
    if "vllm" in case:
        prepare_vllm(case, device, dtype)
    accelerator = zero3_accelerator(case) if case.get("strategy") == "zero3" else None
    start = meter.now()
    meter.reset_peak()
    model = policy(case, device, dtype)
    out["weights"] = meter.now() - start
    before = meter.now()
    scorer, scoring_context = reference(case, model, device, dtype)
    out["reference"] = meter.now() - before
    if "vllm" in case:  # the colocated engine lives beside the policy for the whole run
        engine = vllm_engine(case, model, meter, out)  # noqa: F841  (held to the end, as in a run)
    entropy = case.get("entropy", True)
    out["scoring"] = scoring_peak(scorer, scoring_context, args, meter)
    optimizer = adamw(model)
    if accelerator is not None:  # the engine gathers each layer's shards in its forward: prepared first
        before = meter.now()
        model, optimizer = accelerator.prepare(model, optimizer)
        out["states"] = meter.now() - before
    joined = joined_batch(args)  # held to the end, as the step's inputs are in a run
    out["activations"] = trunk_activations(model, joined, meter)
    out["chunked_head"] = int(chunkable_head(model))
    if accelerator is not None:
        return zero3_window(accelerator, model, args, entropy, meter, start, out)
    return steady_window(case, model, optimizer, args, entropy, meter, start, out)


def random_batch(case: dict, device: str) -> tuple:
    """One micro-batch of random token ids (seeded), with the left padding the runtime's batches have, as
    completion_logps takes it: prompt ids and mask, completion ids and mask, temperature 1."""
    b, prompt, completion, vocab = case["batch"], case["prompt"], case["completion"], case["vocab"]
    gen = torch.Generator().manual_seed(0)
    prompt_ids = torch.randint(0, vocab, (b, prompt), generator=gen).to(device)
    completion_ids = torch.randint(0, vocab, (b, completion), generator=gen).to(device)
    prompt_mask = torch.ones_like(prompt_ids)
    prompt_mask[: b // 2, : prompt // 4] = 0  # left padding, as the runtime's batches have
    completion_mask = torch.ones_like(completion_ids)
    return (prompt_ids, prompt_mask, completion_ids, completion_mask, 1.0)


def warm_up(args: tuple, device: str, dtype: torch.dtype) -> None:
    """Imports and first-use allocations, outside every measurement: a tiny model's micro-step and no-grad pass."""
    _import_optional_libraries()  # transformers loads bitsandbytes' native library lazily when it is installed
    prompt_ids, prompt_mask, completion_ids, completion_mask, _ = args
    warm = build(64, 1, 64, 4, 2, 64, device, dtype)
    micro_step(warm, (prompt_ids % 64, prompt_mask, completion_ids % 64, completion_mask, 1.0), True)
    with torch.no_grad():
        completion_logps(warm, prompt_ids % 64, prompt_mask, completion_ids % 64, completion_mask, 1.0)


def scoring_peak(scorer, scoring_context, args: tuple, meter: Meter) -> int:
    """The no-grad log-prob pass's peak above what is held (old and reference log-probs); 0 without a reference."""
    if scorer is None:
        return 0
    with torch.no_grad(), scoring_context():  # once unmeasured: the allocator's first use of these sizes
        completion_logps(scorer, *args, with_entropy=False)
    before = meter.now()
    meter.reset_peak()
    with torch.no_grad(), scoring_context():
        completion_logps(scorer, *args, with_entropy=False)
    return meter.peak() - before


def adamw(model):
    """The runtime's optimizer (training.optim.build_optimizer) as TrainingArguments' AdamW defaults build it."""
    settings = SimpleNamespace(
        weight_decay=0.0,
        learning_rate=1e-5,
        optim="adamw_torch",
        optim_args=None,
        adam_beta1=0.9,
        adam_beta2=0.999,
        adam_epsilon=1e-8,
    )
    return build_optimizer(model, settings)


def joined_batch(args: tuple) -> tuple:
    """The prompt and completion side by side, ids and mask, as the model reads them."""
    prompt_ids, prompt_mask, completion_ids, completion_mask, _ = args
    return torch.cat([prompt_ids, completion_ids], 1), torch.cat([prompt_mask, completion_mask], 1)


def trunk_activations(model, joined: tuple, meter: Meter) -> int:
    """What the decoder trunk keeps for backward (and its output), measured on a forward through the trunk alone."""
    ids, mask = joined
    before = meter.now()
    trunk = _causal_lm(model).model  # the decoder under DeepSpeed's engine or a PEFT wrapper
    hidden = trunk(input_ids=ids, attention_mask=mask).last_hidden_state
    grown = meter.now() - before
    del hidden
    return grown


def steady_window(case: dict, model, optimizer, args: tuple, entropy: bool, meter: Meter, start: int, out: dict):
    """The first micro-step's gradients and the first optimizer step's states, then the steady state's peak: a window
    of two micro-steps with the first one's gradients held (`logits`: the head's buffers above the trunk's), or with
    `accumulation: 1` each micro-step its own window, no gradient held while the next builds."""
    step = lambda: micro_step(model, args, entropy)  # noqa: E731
    before = meter.now()
    step()
    out["gradients"] = meter.now() - before
    before = meter.now()
    optimizer.step()  # the first step creates the optimizer states
    out["optimizer"] = meter.now() - before
    optimizer.zero_grad(set_to_none=True)
    if case.get("accumulation", 2) == 1:  # each micro-step its own window: no gradient held while the next builds
        meter.reset_peak()
        step()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        out["total"] = meter.peak() - start
        return out
    meter.reset_peak()  # the steady state: a window of two micro-steps with the optimizer states held
    step()
    before = meter.now()
    meter.reset_peak()
    step()  # the second micro-step of the window runs with the first one's gradients held
    out["logits"] = meter.peak() - before - out["activations"]  # the head's buffers above the trunk's
    out["total"] = meter.peak() - start
    return out


def _import_optional_libraries() -> None:
    import importlib
    import importlib.util

    for name in ("bitsandbytes", "peft"):  # peft: its import is not the adapters' memory
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


def micro_step(model, args: tuple, entropy: bool) -> None:
    logps, entropies, _ = completion_logps(model, *args, with_entropy=entropy)
    loss = -(logps.sum() + (entropies.sum() * 1e-3 if entropies is not None else 0)) / logps.numel()
    loss.backward()
