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

Read in order: the command and its processes (command.py), one case's parts step by step (parts.py), what a step
reads memory with (meter.py), the case's models as the runtime builds them (models.py), and the two cases that
bring more of the runtime along: DeepSpeed ZeRO-3 (zero3.py) and the colocated vLLM engine (colocate.py).
"""

from grpo_runtime.memprobe.command import main
from grpo_runtime.memprobe.parts import measure

__all__ = ["main", "measure"]
