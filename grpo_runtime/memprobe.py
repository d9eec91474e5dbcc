"""Measure the memory of grpo_runtime's own training step, part by part, to hold the planner's estimate to it.

One case = a Llama-architecture model built locally (random init) and one micro-batch shape. The parts are
measured the way they arise in the runtime: the policy's weights, the reference copy, the no-grad log-prob pass
(old/reference log-probs), the trunk's saved activations, the training step's peak through `completion_logps`
(the logits head included: since the head is chunked, training/lm_head.py, its `logits` part is a few
[tokens-per-chunk, vocab] tiles and the fp32 gradient accumulators, whatever the number of tokens), the gradients
and the optimizer states after the first step.

Optional case keys, each run through the runtime's own code: `lora` ({"r", "targets", "dropout"}: model.loading's
wrap_lora; the reference is then the policy with its adapters disabled), `attention` (the attn_implementation the
model is built with: "sdpa", the default, or "eager"), `checkpointing: true` (model.loading's activation
checkpointing, as load_policy turns it on), `dtype` ("float32", the default, or "bfloat16"), `accumulation: 1`
(one micro-step a window: the steady step's peak with no gradient held from a previous micro-step), `reference: false`
(beta 0: no reference, no log-prob pass), `world_size: 2, strategy: "zero3"` (that many fresh processes with
torchrun's environment, each building setup.new_accelerator for a config with DeepSpeed ZeRO-3 in its `deepspeed`
field and stepping through sharding.backward; {"ranks": [each process's parts]}, with `held`: what stays between
steps; `offload`: "optimizer", "params" or "both" turns on DeepSpeed's CPU offload of those states), `vllm` (run
config overrides: generation.vllm_colocate.ColocateBackend beside the policy, `vllm` what it holds, `generation` the
peak of loading the weights and decoding one batch; needs the vLLM environment).

On CPU the numbers are resident-set deltas: run in a fresh process with MALLOC_MMAP_THRESHOLD_ set low
(`python -m grpo_runtime.memprobe`), so freed tensors go back to the system, and the peak is read from VmHWM
after resetting it through /proc/self/clear_refs. On a GPU they come from torch.cuda.memory_allocated and
max_memory_allocated.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import socket
import subprocess
import sys
from types import SimpleNamespace

import torch

from grpo_runtime.training.logprobs import _causal_lm, chunkable_head, completion_logps
from grpo_runtime.training.optim import build_optimizer
from grpo_schema.engine.words import noun


class Meter:
    """Bytes in use now and the peak since the last reset, on one device."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def hold_mapped_pages(self) -> None:
        """On the CPU, lock the pages mapped so far (the libraries' code and data) in memory: the meter reads the
        process's resident size, and on a busy machine the kernel may drop those file-backed pages mid-measurement,
        which reads as tensors shrinking. Best effort: without the privilege the probe measures as before."""
        if self.cuda:
            return
        try:
            ctypes.CDLL(None, use_errno=True).mlockall(1)  # MCL_CURRENT only: later allocations stay lazy, as in a run
        except (OSError, AttributeError):
            pass

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


def build(
    hidden: int,
    layers: int,
    intermediate: int,
    heads: int,
    kv_heads: int,
    vocab: int,
    device: str,
    dtype: torch.dtype,
    attention: str = "sdpa",
):
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        attn_implementation=attention,
    )
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
    meter.hold_mapped_pages()
    if "vllm" in case:
        _prepare_vllm(case, device, dtype)
    shape = (case["hidden"], case["layers"], case["intermediate"], case["heads"], case["kv_heads"], vocab)
    accelerator = None
    if case.get("strategy") == "zero3":
        if case.get("reference", True):
            # the runtime partitions the reference under its own optimizer-less DeepSpeed engine
            # (sharding.prepare_reference); the probe does not build that engine yet
            raise SystemExit('memprobe: a ZeRO-3 case runs without a reference ("reference": false)')
        accelerator = zero3_accelerator(case)
    start = meter.now()
    meter.reset_peak()
    attention = case.get("attention", "sdpa")
    model = build(*shape, device, dtype, attention)  # under ZeRO-3 partitioned (zero.Init), as from_pretrained is
    if case.get("lora"):
        model = lora_wrapped(model, case["lora"])
    if case.get("checkpointing"):
        checkpointed(model, bool(case.get("lora")))
    model.train()
    out["weights"] = meter.now() - start
    before = meter.now()
    scorer, scoring_context = None, contextlib.nullcontext
    if not case.get("reference", True):  # beta 0 (TRL's default): no reference and no log-prob pass
        pass
    elif case.get("lora"):  # the reference is the policy with its adapter disabled (model.loading.reference_context)
        scorer, scoring_context = model, model.disable_adapter
    else:
        scorer = build(*shape, device, dtype, attention).eval()
    out["reference"] = meter.now() - before
    if "vllm" in case:  # the colocated engine lives beside the policy for the whole run
        engine = vllm_engine(case, model, meter, out)  # noqa: F841  (held to the end, as in a run)
    entropy = case.get("entropy", True)
    args = (prompt_ids, prompt_mask, completion_ids, completion_mask, 1.0)

    out["scoring"] = 0
    if scorer is not None:
        with torch.no_grad(), scoring_context():  # once unmeasured: the allocator's first use of these sizes
            completion_logps(scorer, *args, with_entropy=False)
        before = meter.now()
        meter.reset_peak()
        with torch.no_grad(), scoring_context():
            completion_logps(scorer, *args, with_entropy=False)
        out["scoring"] = meter.peak() - before

    optimizer = build_optimizer(
        model,
        SimpleNamespace(
            weight_decay=0.0,
            learning_rate=1e-5,
            optim="adamw_torch",
            optim_args=None,
            adam_beta1=0.9,
            adam_beta2=0.999,
            adam_epsilon=1e-8,
        ),
    )
    if accelerator is not None:  # the engine gathers each layer's shards in its forward: prepared first
        before = meter.now()
        model, optimizer = accelerator.prepare(model, optimizer)
        out["states"] = meter.now() - before
    ids = torch.cat([prompt_ids, completion_ids], 1)
    mask = torch.cat([prompt_mask, completion_mask], 1)
    before = meter.now()
    trunk = _causal_lm(model).model  # the decoder under DeepSpeed's engine or a PEFT wrapper
    hidden = trunk(input_ids=ids, attention_mask=mask).last_hidden_state
    out["activations"] = meter.now() - before  # what the decoder trunk keeps for backward (and its output)
    del hidden

    out["chunked_head"] = int(chunkable_head(model))
    if accelerator is not None:
        return _measure_deepspeed(accelerator, model, args, entropy, meter, start, out)
    step = lambda: _micro_step(model, args, entropy)  # noqa: E731
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


def _measure_deepspeed(accelerator, model, args, entropy, meter, start, out) -> dict:
    """ZeRO-3: accelerate's prepare built DeepSpeed's engine, whose optimizer allocates the fp32 partitions, the
    gradient partitions and Adam's moments at once (the `states` part). The window is two micro-steps through the
    runtime's own backward (sharding.backward: DeepSpeed steps at the boundary)."""
    from grpo_runtime.distributed.sharding import backward

    def step(last: bool) -> None:
        logps, entropies, _ = completion_logps(model, *args, with_entropy=entropy)
        loss = -(logps.sum() + (entropies.sum() * 1e-3 if entropies is not None else 0)) / logps.numel()
        backward(accelerator, model, loss, last)

    step(False)
    step(True)  # the first optimizer step
    out["held"] = meter.now() - start  # everything kept between steps: shards, states, DeepSpeed's buffers
    before = meter.now()
    meter.reset_peak()  # the steady state
    step(False)
    step(True)
    out["logits"] = meter.peak() - before - out["activations"]
    out["total"] = meter.peak() - start
    return out


def _prepare_vllm(case: dict, device: str, dtype) -> None:
    """Outside the measurement: vLLM's modules imported, and the policy's initial weights saved where the engine
    loads them from (model_name_or_path); the tokenizer is never read (the engine runs on token ids)."""
    import tempfile

    import vllm  # noqa: F401
    from vllm.model_executor.models import llama  # noqa: F401

    folder = tempfile.mkdtemp(prefix="memprobe-vllm-")
    build(
        case["hidden"],
        case["layers"],
        case["intermediate"],
        case["heads"],
        case["kv_heads"],
        case["vocab"],
        device,
        dtype,
    ).save_pretrained(folder)
    case["vllm_model_dir"] = folder


def vllm_engine(case: dict, model, meter, out: dict):
    """The runtime's colocated engine (generation.vllm_colocate.ColocateBackend) built from a run config, as
    build_parts builds it; `vllm` is what it holds, `generation` the peak above that of loading the policy's weights
    into it and generating one batch (batch prompts x completion tokens, ignoring end-of-sequence)."""
    import yaml

    from grpo_runtime.generation.vllm_colocate import ColocateBackend
    from grpo_runtime.setup import new_accelerator
    from grpo_schema import check_text

    settings = dict(
        model_name_or_path=case["vllm_model_dir"],
        dataset_name="memprobe.jsonl",
        output_dir="memprobe-out",
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        per_device_train_batch_size=case["batch"],
        num_generations=case["batch"],
        gradient_accumulation_steps=2,
        max_completion_length=case["completion"],
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch",
        report_to="none",
        use_vllm=True,
        vllm_mode="colocate",
        generation_kwargs={"ignore_eos": True, "min_tokens": case["completion"]},
    )
    settings.update(case["vllm"] if isinstance(case["vllm"], dict) else {})
    result = check_text(yaml.safe_dump(settings), world_size=1)
    if not result.valid or result.plan is None:
        raise SystemExit(f"memprobe: the vLLM config does not validate: {result.diagnostics}")
    parts = SimpleNamespace(accelerator=new_accelerator(result.config, result.plan), model=model, eos_ids=[])
    before = meter.now()
    backend = ColocateBackend(result.config, result.plan, parts)
    out["vllm"] = meter.now() - before
    prompts = [list(range(1, case["prompt"] + 1))] * case["batch"]
    before = meter.now()
    meter.reset_peak()
    samples = backend.generate(prompts, case["batch"], step=0)
    out["generation"] = meter.peak() - before
    out["generated_tokens"] = sum(len(ids) for ids in samples.completions)
    return backend


def lora_wrapped(model, lora: dict):
    """The policy wrapped as the runtime wraps it (model.loading.wrap_lora), with TRL's LoRA defaults."""
    from grpo_runtime.model.loading import wrap_lora

    r = lora.get("r", 16)
    return wrap_lora(
        model,
        SimpleNamespace(
            lora_task_type="CAUSAL_LM",
            lora_r=r,
            lora_alpha=lora.get("alpha", 2 * r),
            lora_dropout=lora.get("dropout", 0.05),
            lora_target_modules=lora.get("targets"),
            use_rslora=False,
            use_dora=False,
            lora_modules_to_save=None,
            lora_target_parameters=None,
        ),
    )


def checkpointed(model, lora: bool) -> None:
    """Activation checkpointing as the runtime's load_policy turns it on (model.loading.enable_checkpointing with
    transformers' defaults; under LoRA the embeddings' output is made to require a gradient, or the frozen
    embeddings would cut the checkpointed graph)."""
    from grpo_runtime.model.loading import enable_checkpointing

    model.config.use_cache = False
    enable_checkpointing(model, None)
    if lora:
        model.enable_input_require_grads()


def zero3_accelerator(case: dict):
    """The runtime's Accelerator (setup.new_accelerator) for a config with DeepSpeed ZeRO-3 in its `deepspeed`
    field, in this process of a WORLD_SIZE-process job."""
    import yaml

    from grpo_runtime.setup import new_accelerator
    from grpo_schema import check_text

    world = int(os.environ["WORLD_SIZE"])
    settings = dict(
        model_name_or_path="memprobe",
        dataset_name="memprobe.jsonl",
        output_dir="memprobe-out",
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        per_device_train_batch_size=case["batch"],
        num_generations=2,
        gradient_accumulation_steps=2,
        max_completion_length=case["completion"],
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch",
        learning_rate=1e-5,
        report_to="none",
        deepspeed={
            "zero_optimization": {"stage": 3, **_offload(case.get("offload"))},
            "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto",
        },
    )
    result = check_text(yaml.safe_dump(settings), world_size=world)
    if not result.valid or result.plan is None:
        raise SystemExit(f"memprobe: the ZeRO-3 config does not validate: {result.diagnostics}")
    return new_accelerator(result.config, result.plan)


def _offload(which: str | None) -> dict:
    """DeepSpeed's CPU offload of the optimizer states ("optimizer"), the parameters ("params") or both."""
    out = {}
    if which in ("optimizer", "both"):
        out["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if which in ("params", "both"):
        out["offload_param"] = {"device": "cpu", "pin_memory": True}
    return out


def _import_optional_libraries() -> None:
    import importlib
    import importlib.util

    for name in ("bitsandbytes", "peft"):  # peft: its import is not the adapters' memory
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
    parser.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)  # one process of a job
    args = parser.parse_args(argv)
    case = json.loads(args.case)
    world = int(case.get("world_size", 1))
    if world > 1 and args.rank is None:
        print(json.dumps(run_ranks(args.case, world, args.device)))
        return 0
    torch.set_num_threads(1)
    print(json.dumps(measure(case, args.device)))
    return 0


def run_ranks(case: str, world: int, device: str) -> dict:
    """`world` fresh processes of one job (the environment torchrun / accelerate launch set), each measuring its
    own parts; {"ranks": [rank 0's parts, rank 1's, ...]}."""
    with socket.socket() as handle:
        handle.bind(("127.0.0.1", 0))
        port = handle.getsockname()[1]
    procs = []
    for rank in range(world):
        env = {
            **os.environ,
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(world),
            "LOCAL_WORLD_SIZE": str(world),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "grpo_runtime.memprobe", case, "--device", device, "--rank", str(rank)],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [proc.communicate()[0] for proc in procs]
    failed = [rank for rank, proc in enumerate(procs) if proc.returncode]
    if failed:
        raise SystemExit(f"memprobe: {noun(len(failed), 'rank')} {failed} failed")
    return {"ranks": [json.loads(text.strip().splitlines()[-1]) for text in outputs]}


if __name__ == "__main__":
    sys.exit(main())
