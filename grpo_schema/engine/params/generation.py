"""Sampling of completions (transformers `generate`; vLLM has its own module)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int, JsonDict, PadMultiple

CACHE_IMPLEMENTATIONS = (
    "static",
    "offloaded_static",
    "sliding_window",
    "hybrid",
    "hybrid_chunked",
    "offloaded_hybrid",
    "offloaded_hybrid_chunked",
    "dynamic",
    "offloaded",
    "quantized",
    "paged",
)


PadMultipleOf = Annotated[Annotated[int, Field(ge=1)] | Literal["auto"] | None, PadMultiple]


class GenerationParams(AreaParams):
    area = "generation"
    title = "Generation"
    summary = "How completions are sampled: length, temperature and the other sampling knobs."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "cache_implementation": {
            "static": "Key/value cache allocated once at full length; what torch.compile needs.",
            "offloaded_static": "A static cache kept in CPU memory between layers.",
            "sliding_window": "Keeps only the attention window, for sliding-window models.",
            "hybrid": "Sliding-window and full-attention layers mixed (Gemma 2 style).",
            "hybrid_chunked": "Hybrid cache for chunked-attention models (Llama 4 style).",
            "offloaded_hybrid": "A hybrid cache kept in CPU memory between layers.",
            "offloaded_hybrid_chunked": "A chunked hybrid cache kept in CPU memory between layers.",
            "dynamic": "Grows with the sequence (transformers' default).",
            "offloaded": "A dynamic cache kept in CPU memory between layers: less GPU memory, slower.",
            "quantized": "Quantized keys and values: less memory, some accuracy (needs quanto or HQQ).",
            "paged": "Fixed-size blocks shared by sequences, as continuous batching uses.",
        }
    }

    max_completion_length: Int | None = Field(
        512,
        ge=1,
        description="Most tokens generated per completion (the EOS token included). null means no limit, "
        "which dr_grpo cannot use.",
    )
    temperature: Float = Field(
        1.0, gt=0, description="Sampling temperature. Log-probs in the loss use the same temperature."
    )
    top_p: Float = Field(
        1.0,
        gt=0,
        le=1,
        description="Nucleus sampling: keep the smallest set of tokens whose "
        "probability adds up to top_p. 1.0 keeps all.",
    )
    top_k: Int = Field(0, ge=0, description="Keep only the k most likely tokens. 0 disables the filter.")
    min_p: Float | None = Field(
        None,
        examples=[0.05],
        ge=0,
        le=1,
        description="Drop tokens whose probability is below min_p times the top token's. null disables it.",
    )
    repetition_penalty: Float = Field(
        1.0,
        gt=0,
        description="Penalty on tokens already in the prompt or completion; > 1 discourages repeats, 1.0 is off.",
    )
    generation_kwargs: JsonDict | None = Field(
        None,
        description="Extra keyword arguments for the generation config (transformers GenerationConfig or vLLM "
        "SamplingParams). Keys here override the dedicated fields above. A JSON object string works too.",
    )
    chat_template_kwargs: JsonDict | None = Field(
        None,
        examples=[{"enable_thinking": False}],
        description="Extra keyword arguments passed to the chat template, e.g. {enable_thinking: false}.",
    )
    cache_implementation: Literal[CACHE_IMPLEMENTATIONS] | None = Field(  # type: ignore[valid-type]
        None, description="KV-cache implementation for transformers generation; null keeps the model's default."
    )
    pad_to_multiple_of: PadMultipleOf = Field(
        "auto",
        description="Pad generation inputs to a multiple of this many tokens. 'auto' means 128 on AWS Neuron "
        "devices and no padding elsewhere (TRL decides on the machine that runs the job).",
    )
    max_tool_calling_iterations: Int | None = Field(
        None, examples=[5], ge=0, description="Most rounds of tool calls per completion; null means no limit."
    )
    use_transformers_continuous_batching: bool = Field(
        False,
        description="Generate with transformers' continuous batching (needs transformers >= 5.8, text models only).",
    )
    transformers_continuous_batching_config: JsonDict | None = Field(
        None, description="Settings for transformers continuous batching, as a mapping or JSON object string."
    )
    use_transformers_paged: bool = Field(False, description="Deprecated alias of use_transformers_continuous_batching.")
