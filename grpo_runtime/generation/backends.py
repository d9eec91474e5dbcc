"""Which generation backend a config runs, and building it (the interface is generation.backend).

Plain transformers `generate` is defined here, being a few lines over rollout.sample_completions; continuous
batching, vLLM colocate and vLLM server have modules of their own, imported only when a run uses them (vLLM
imports are slow, and absent on most machines).
"""

from __future__ import annotations

from grpo_runtime.generation import rollout  # rollout.sample_completions: one name to patch in tests
from grpo_runtime.generation.backend import Backend, Samples
from grpo_runtime.generation.continuous import ContinuousBatchingBackend, continuous_batching_wanted
from grpo_runtime.model.loading import checkpointing_settings


def backend_name(config) -> str:
    """What run_info.json reports: transformers, transformers-continuous-batching, vllm-colocate or vllm-server."""
    if config.use_vllm:
        return f"vllm-{config.vllm_mode}"
    return "transformers-continuous-batching" if continuous_batching_wanted(config) else "transformers"


class TransformersBackend:
    """`generate` on the policy itself (rollout.sample_completions and its fast paths)."""

    name = "transformers"

    def __init__(self, parts, config):
        self.parts = parts
        self.multiple = rollout.pad_multiple(config.pad_to_multiple_of)
        self.checkpointing = config

    def generate(self, prompt_lists, num_generations, step) -> Samples:
        parts = self.parts
        with rollout.generation_mode(parts.policy, checkpointing_settings(self.checkpointing)[1]), parts.autocast():
            completions = rollout.sample_completions(
                parts.policy,
                prompt_lists,
                parts.generation_config,
                parts.tokenizer.pad_token_id,
                parts.eos_ids,
                self.multiple,
            )
        return Samples(completions, None)

    def close(self) -> None:
        pass


def build_backend(config, plan, parts) -> Backend:
    if not config.use_vllm:
        if continuous_batching_wanted(config):
            return ContinuousBatchingBackend(parts, config)
        return TransformersBackend(parts, config)
    if config.vllm_mode == "colocate":
        from grpo_runtime.generation.vllm_colocate import ColocateBackend

        return ColocateBackend(config, plan, parts)
    from grpo_runtime.generation.vllm_server import ServerBackend

    return ServerBackend(config, plan, parts)
