"""What grpo_runtime does with the fields of sampling completions: transformers generate, continuous batching, vLLM."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, ignored, installed, refuse_if
from grpo_runtime.generation.continuous import continuous_batching_wanted, unknown_batching_settings
from grpo_runtime.support.fields.shared import sharded_weights
from grpo_schema.engine.codes import U_GENERATION, U_PACKAGE, U_SHARDING


def _vllm_missing(s: Setting) -> bool:
    """The engine (colocate) or the NCCL weight push (server mode on GPUs) needs vllm where the run starts; a CPU
    trainer talks to a server over HTTP alone. Decided without importing torch."""
    if not s.config.use_vllm or installed("vllm"):
        return False
    return s.config.vllm_mode == "colocate" or not s.config.use_cpu


def _continuous(s: Setting) -> bool:
    return continuous_batching_wanted(s.config) and not s.config.use_vllm


def _continuous_sharded(s: Setting) -> bool:
    """Each process schedules its own requests, so weights sharded across processes (FSDP, ZeRO-3) cannot serve
    them; TRL gathers the whole model in every process for this, which grpo_runtime does not do."""
    return _continuous(s) and sharded_weights(s)


CONTINUOUS = (
    "generation.backends.build_backend -> continuous.py: the policy's generate_batch (paged KV cache), as in TRL"
)


CONTINUOUS_LIMITS = (
    refuse_if(
        _continuous_sharded,
        "continuous batching with weights sharded across processes (FSDP, ZeRO-3) is not "
        "run: each process schedules its own requests",
        "use vLLM, plain generate, DDP or ZeRO-1/2",
        U_SHARDING,
    ),
)


TOOLS = "tools, environments and rollout_func are Python objects a config cannot hold; TRL reads this only with them"


FIELDS: dict[str, Support] = {
    "cache_implementation": honoured("rollout.generation_config"),
    "chat_template_kwargs": honoured("rollout.tokenize_prompts, rewards.RewardModel"),
    "generation_kwargs": honoured("rollout.generation_config (wins over the named fields)"),
    "max_completion_length": honoured("rollout.generation_config"),
    "max_tool_calling_iterations": ignored(TOOLS),
    "min_p": honoured("rollout.generation_config"),
    "pad_to_multiple_of": honoured("rollout.pad_multiple"),
    "repetition_penalty": honoured("rollout.generation_config"),
    "temperature": honoured("rollout.generation_config, logprobs.py"),
    "top_k": honoured("rollout.generation_config"),
    "top_p": honoured("rollout.generation_config"),
    "transformers_continuous_batching_config": honoured(
        "continuous.py: ContinuousBatchingConfig(**it), max_memory_percent 0.5 unless set, as in TRL",
        refuse_if(
            lambda s: bool(unknown_batching_settings(s.config)),
            lambda s: unknown_batching_settings(s.config)[0],
            "use ContinuousBatchingConfig's field names (transformers.generation)",
            U_GENERATION,
        ),
    ),
    "use_transformers_continuous_batching": honoured(CONTINUOUS, *CONTINUOUS_LIMITS),
    "use_transformers_paged": honoured(
        CONTINUOUS + "; the deprecated name of use_transformers_continuous_batching (whose limits apply)"
    ),
    "use_vllm": honoured(
        "generation.backends.build_backend: a vLLM engine in each process (colocate) or a `trl vllm-serve` server",
        refuse_if(
            _vllm_missing,
            "use_vllm: true needs the vllm package, which is not installed here",
            "install the `vllm` extra (pip install 'grpo-config[runtime,vllm]'; CPU-only machines: "
            "scripts/setup-vllm.sh), or set use_vllm: false",
            U_PACKAGE,
        ),
    ),
    "vllm_enable_sleep_mode": honoured(
        "vllm_colocate.ColocateEngine (warned where the platform's vLLM has no sleep mode); with use_vllm"
    ),
    "vllm_gpu_memory_utilization": honoured(
        "vllm_colocate.ColocateEngine (the engine's share of the device); with use_vllm"
    ),
    "vllm_group_port": honoured("vllm_server.ServerBackend (the weight-transfer group); with use_vllm"),
    "vllm_max_model_length": honoured("vllm_colocate.ColocateEngine (max_model_len); with use_vllm"),
    "vllm_mode": honoured("generation.backends.build_backend (colocate or server); with use_vllm"),
    "vllm_model_impl": honoured("vllm_colocate.ColocateEngine (model_impl); with use_vllm"),
    "vllm_server_base_url": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_host": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_port": honoured("vllm_server.ServerBackend; with use_vllm"),
    "vllm_server_timeout": honoured(
        "vllm_server.ServerBackend (how long to wait for the server at start); with use_vllm"
    ),
    "vllm_structured_outputs_regex": honoured(
        "generation.sampling settings (vLLM's structured outputs); with use_vllm"
    ),
    "vllm_tensor_parallel_size": honoured(
        "vllm_colocate.ColocateEngine (prompts gathered per tensor-parallel group); with use_vllm"
    ),
}
