"""Measure the memory of grpo_runtime's own training step, part by part, to hold the planner's estimate to it.

One case = a Llama-architecture model built locally (random init) and one micro-batch shape. The parts are
measured the way they arise in the runtime: the policy's weights, the reference copy, the no-grad log-prob pass
(old/reference log-probs), the trunk's saved activations, the training step's peak through `completion_logps`
(the logits head included: since the head is chunked, training/lm_head.py, its `logits` part is a few
[tokens-per-chunk, vocab] tiles and the fp32 gradient accumulators, whatever the number of tokens), the gradients
and the optimizer states after the first step.

On CPU the numbers are resident-set deltas: run in a fresh process with MALLOC_MMAP_THRESHOLD_ set low
(`python -m grpo_runtime.launch.memprobe`), so freed tensors go back to the system, and the peak is read from VmHWM
after resetting it through /proc/self/clear_refs. On a GPU they come from torch.cuda.memory_allocated and
max_memory_allocated.
"""

from __future__ import annotations

import argparse
import json
import sys
from types import SimpleNamespace

import torch

from grpo_runtime.training.logprobs import completion_logps
from grpo_runtime.training.optim import build_optimizer


class Meter:
    """Bytes in use now and the peak since the last reset, on one device."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def now(self) -> int:
        if self.cuda:
            torch.cuda.synchronize()
            return torch.cuda.memory_allocated()
        return self._status("VmRSS")

    def reset_peak(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")

    def peak(self) -> int:
        if self.cuda:
            torch.cuda.synchronize()
            return torch.cuda.max_memory_allocated()
        return self._status("VmHWM")

    @staticmethod
    def _status(key: str) -> int:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"{key} not in /proc/self/status")


def build(hidden: int, layers: int, intermediate: int, heads: int, kv_heads: int, vocab: int, device: str,
          dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=intermediate,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                         max_position_embeddings=4096, tie_word_embeddings=False, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype).to(device)
    model.config.use_cache = False
    return model


def measure(case: dict, device: str = "cpu") -> dict:
    """Every part of one case, in bytes."""
    dtype = getattr(torch, case.get("dtype", "float32"))
    meter = Meter(device)
    b, prompt, completion, vocab = case["batch"], case["prompt"], case["completion"], case["vocab"]
    gen = torch.Generator().manual_seed(0)
    prompt_ids = torch.randint(0, vocab, (b, prompt), generator=gen).to(device)
    completion_ids = torch.randint(0, vocab, (b, completion), generator=gen).to(device)
    prompt_mask = torch.ones_like(prompt_ids)
    prompt_mask[: b // 2, : prompt // 4] = 0  # left padding, as the runtime's batches have
    completion_mask = torch.ones_like(completion_ids)
    out: dict[str, int] = {}
    _import_optional_libraries()  # transformers loads bitsandbytes' native library lazily when it is installed
    warm = build(64, 1, 64, 4, 2, 64, device, dtype)  # imports and first-use allocations, outside every measurement
    _micro_step(warm, (prompt_ids % 64, prompt_mask, completion_ids % 64, completion_mask, 1.0), True)
    with torch.no_grad():
        completion_logps(warm, prompt_ids % 64, prompt_mask, completion_ids % 64, completion_mask, 1.0)
    del warm
    start = meter.now()
    meter.reset_peak()
    model = build(case["hidden"], case["layers"], case["intermediate"], case["heads"], case["kv_heads"], vocab,
                  device, dtype)
    out["weights"] = meter.now() - start
    before = meter.now()
    reference = build(case["hidden"], case["layers"], case["intermediate"], case["heads"], case["kv_heads"], vocab,
                      device, dtype).eval()
    out["reference"] = meter.now() - before
    entropy = case.get("entropy", True)
    args = (prompt_ids, prompt_mask, completion_ids, completion_mask, 1.0)

    with torch.no_grad():  # once unmeasured: the allocator's first use of these sizes is not the pass's own
        completion_logps(reference, *args, with_entropy=False)
    before = meter.now()
    meter.reset_peak()
    with torch.no_grad():
        completion_logps(reference, *args, with_entropy=False)
    out["scoring"] = meter.peak() - before

    ids = torch.cat([prompt_ids, completion_ids], 1)
    mask = torch.cat([prompt_mask, completion_mask], 1)
    before = meter.now()
    hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
    out["activations"] = meter.now() - before  # what the decoder trunk keeps for backward (and its output)
    del hidden

    optimizer = build_optimizer(model, SimpleNamespace(weight_decay=0.0, learning_rate=1e-5, optim="adamw_torch",
                                                       optim_args=None, adam_beta1=0.9, adam_beta2=0.999,
                                                       adam_epsilon=1e-8))
    step = lambda: _micro_step(model, args, entropy)  # noqa: E731
    before = meter.now()
    step()
    out["gradients"] = meter.now() - before
    before = meter.now()
    optimizer.step()  # the first step creates the optimizer states
    out["optimizer"] = meter.now() - before
    optimizer.zero_grad(set_to_none=True)
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

    for name in ("bitsandbytes",):
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


def _micro_step(model, args, entropy: bool) -> None:
    logps, entropies, _ = completion_logps(model, *args, with_entropy=entropy)
    loss = -(logps.sum() + (entropies.sum() * 1e-3 if entropies is not None else 0)) / logps.numel()
    loss.backward()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", help="the case as a JSON object")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(json.dumps(measure(json.loads(args.case), args.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
