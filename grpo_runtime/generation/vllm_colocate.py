"""`vllm_mode: colocate`: a vLLM engine inside each training process.

Like TRL 1.16: the engine is built from `model_name_or_path` with `vllm_tensor_parallel_size`,
`vllm_gpu_memory_utilization`, `vllm_max_model_length`, `vllm_model_impl`, `vllm_enable_sleep_mode`,
`trust_remote_code`, `max_num_seqs = per_device_train_batch_size * tensor_parallel * steps_per_generation`, the
external-launcher executor (the engine runs in this process and joins the training job's process group) and
processed log-probs (after temperature, as the trainer scores them). With tensor parallelism the prompts of a
tensor-parallel group are gathered, generated once and each process keeps its own rows.

Weights: before a generation that needs them (the optimizer step changed since the last load), the policy's full
weights (weights.py: gathered from FSDP / ZeRO-3 shards, LoRA merged) are loaded in place with the engine's own
reload path, and its prefix cache is reset. Sleep mode (weights and KV cache released between generations) is used
where the platform has it (CUDA, ROCm, XPU); elsewhere it is ignored with a warning.

The engine seed is `seed + rank // tensor_parallel_size` (TRL uses the rank alone), so `seed` changes the samples.
"""

from __future__ import annotations

import os
import socket
import warnings

from grpo_runtime.distributed.weights import full_named_parameters
from grpo_runtime.generation.backend import GenerationError, Samples, sampled_logprobs, vllm_sampling_settings


def require_vllm():
    try:
        import vllm  # noqa: F401
    except ImportError as error:
        raise GenerationError(
            f"use_vllm: true needs the vllm package ({error}); install the `vllm` extra "
            "(pip install 'grpo-config[runtime,vllm]'; on a CPU-only machine: scripts/setup-vllm.sh) or set "
            "use_vllm: false"
        ) from error


def free_port() -> int:
    with socket.socket() as handle:
        handle.bind(("127.0.0.1", 0))
        return handle.getsockname()[1]


def launcher_environment(accelerator) -> None:
    """The external launcher reads the job's layout from the environment (torchrun sets it; one process may not)."""
    os.environ["RANK"] = str(accelerator.process_index)
    os.environ["LOCAL_RANK"] = str(accelerator.local_process_index)
    os.environ["WORLD_SIZE"] = str(accelerator.num_processes)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    if accelerator.device.type == "cpu":
        # vLLM pins its threads to cores by default; in a training process that fights the trainer's own threads
        # (measured: 12x slower decoding on 2 busy cores), so leave placement to the OS unless the user chose.
        os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache; vLLM's default is 4


def sleep_mode_available() -> bool:
    from vllm.platforms import current_platform

    return current_platform.is_sleep_mode_available()


def runs(prompt_lists: list[list[int]]) -> list[tuple[list[int], int]]:
    """Consecutive equal prompts as (prompt, count): each distinct prompt is sent once with n=count, so the engine
    prefills it once for its group (a group split between processes is a shorter run on each)."""
    out: list[tuple[list[int], int]] = []
    for ids in prompt_lists:
        if out and out[-1][0] == ids:
            out[-1] = (ids, out[-1][1] + 1)
        else:
            out.append((ids, 1))
    return out


class ColocateBackend:
    name = "vllm-colocate"

    def __init__(self, config, plan, parts):
        require_vllm()
        import torch
        from vllm import LLM, SamplingParams

        sampling_params(SamplingParams, vllm_sampling_settings(config, parts.eos_ids, 1))  # refused before the start

        accelerator = parts.accelerator
        tp = config.vllm_tensor_parallel_size
        if accelerator.num_processes % tp:
            raise GenerationError(
                f"vllm_tensor_parallel_size ({tp}) must divide the number of processes ({accelerator.num_processes})"
            )
        self.parts, self.config, self.tp, self.last_step = parts, config, tp, None
        self.tp_group = None
        if tp > 1:
            groups = [list(range(i * tp, (i + 1) * tp)) for i in range(accelerator.num_processes // tp)]
            self.tp_group, _ = torch.distributed.new_subgroups_by_enumeration(groups)
        self.sleeping = config.vllm_enable_sleep_mode
        if self.sleeping and not sleep_mode_available():
            warnings.warn(
                "vllm_enable_sleep_mode is ignored: this platform's vLLM has no sleep mode "
                "(the engine keeps its weights and KV cache between generations)",
                stacklevel=2,
            )
            self.sleeping = False
        launcher_environment(accelerator)
        self.llm = LLM(
            model=config.model_name_or_path,
            revision=config.model_revision,
            tensor_parallel_size=tp,
            gpu_memory_utilization=config.vllm_gpu_memory_utilization,
            max_model_len=config.vllm_max_model_length,
            max_num_seqs=config.per_device_train_batch_size * tp * plan.steps_per_generation,
            max_num_batched_tokens=4096,
            enable_sleep_mode=self.sleeping,
            model_impl=config.vllm_model_impl,
            distributed_executor_backend="external_launcher",
            seed=config.seed + accelerator.process_index // tp,
            logprobs_mode="processed_logprobs",
            trust_remote_code=config.trust_remote_code,
            skip_tokenizer_init=True,  # prompts arrive as token ids; completions are decoded by the trainer
            # On CPU, compiling the model takes minutes on a few cores before the first step; run it eagerly.
            enforce_eager=accelerator.device.type == "cpu",
        )
        if self.sleeping:
            self.llm.sleep(level=2)  # level 2 drops the weights: the first generation loads them
        accelerator.wait_for_everyone()

    def load_weights(self) -> None:
        """The policy's current weights into the engine (every process walks the gather), then a fresh cache."""
        if self.sleeping:
            self.llm.wake_up(tags=["weights"])
        weights = ((name, tensor) for name, tensor in full_named_parameters(self.parts.model, self.parts.accelerator))
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
        self.llm.reset_prefix_cache()

    def generate(self, prompt_lists, num_generations, step) -> Samples:
        from vllm import SamplingParams

        if step != self.last_step:
            self.load_weights()
            self.last_step = step
        rows, local = self.group_prompts(prompt_lists)
        if self.sleeping:
            self.llm.wake_up(tags=["kv_cache"])
        settings = vllm_sampling_settings(self.config, self.parts.eos_ids, 1)
        requests, params = [], []
        for ids, count in runs(rows):
            requests.append({"prompt_token_ids": ids})
            params.append(sampling_params(SamplingParams, {**settings, "n": count}))
        outputs = self.llm.generate(requests, sampling_params=params, use_tqdm=False)
        if self.sleeping:
            self.llm.sleep(level=2)
        completions = [list(c.token_ids) for out in outputs for c in out.outputs]
        logprobs = sampled_logprobs(
            [[next(iter(p.values())).logprob for p in c.logprobs] for out in outputs for c in out.outputs]
        )
        return Samples(completions[local], logprobs[local])

    def group_prompts(self, prompt_lists):
        """With tensor parallelism the group's processes generate together: gather their rows, keep ours."""
        if self.tp_group is None:
            return prompt_lists, slice(None)
        import torch

        gathered = [None] * self.tp
        torch.distributed.all_gather_object(gathered, prompt_lists, group=self.tp_group)
        here = torch.distributed.get_rank(group=self.tp_group)
        return [row for part in gathered for row in part], slice(
            here * len(prompt_lists), (here + 1) * len(prompt_lists)
        )

    def close(self) -> None:
        self.llm = None


def sampling_params(cls, settings: dict):
    """SamplingParams from the settings; a field vLLM does not know (often a transformers-only generation_kwargs
    key) is reported by name instead of a traceback."""
    settings = dict(settings)
    regex = settings.pop("structured_outputs", None)
    if isinstance(regex, dict):
        from vllm.sampling_params import StructuredOutputsParams

        settings["structured_outputs"] = StructuredOutputsParams(**regex)
    try:
        return cls(**settings)
    except TypeError as error:
        raise GenerationError(
            f"generation_kwargs: vLLM's SamplingParams refuses them ({error}); with use_vllm "
            "they are SamplingParams fields (e.g. seed, frequency_penalty), not transformers "
            "GenerationConfig fields"
        ) from error
