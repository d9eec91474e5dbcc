"""Built-in model facts: the numbers the families' published config.json files state.

Parameter counts are computed from these numbers (ModelFacts.total_params); `published_params` is the total the
model card (or the Hub's safetensors index) states, kept only so a test can hold the computation to within 1%.
A name matches after dropping the organisation and the usual suffixes (-Instruct, -it, ...); fine-tunes that keep
a base architecture (Math, Coder, R1-Distill) map to their base.
"""

from __future__ import annotations

import re

from grpo_schema.engine.hardware.models import ModelFacts

_E = 1e9


def _qwen2(name, h, layers, i, heads, kv, vocab, tied, published):
    return ModelFacts(
        name, h, layers, i, heads, kv, vocab, tie_word_embeddings=tied, attention_bias=True, published_params=published
    )


def _qwen3(name, h, layers, i, heads, tied, published):
    return ModelFacts(
        name,
        h,
        layers,
        i,
        heads,
        8,
        151936,
        head_dim=128,
        tie_word_embeddings=tied,
        qk_norm=True,
        published_params=published,
    )


def _llama(name, h, layers, i, heads, kv, vocab, tied, published):
    return ModelFacts(name, h, layers, i, heads, kv, vocab, tie_word_embeddings=tied, published_params=published)


def _gemma(name, h, layers, i, heads, kv, head_dim, vocab, published, qk_norm):
    return ModelFacts(
        name,
        h,
        layers,
        i,
        heads,
        kv,
        vocab,
        head_dim=head_dim,
        tie_word_embeddings=True,
        qk_norm=qk_norm,
        norms_per_layer=4,
        published_params=published,
    )


def _olmo2(name, h, layers, i, heads, kv, tied, published):
    # OLMo 2 normalises q and k over their whole width (not per head): 2 x q_width-ish weights, under 0.1%
    return ModelFacts(name, h, layers, i, heads, kv, 100352, tie_word_embeddings=tied, published_params=published)


MODELS: dict[str, ModelFacts] = {
    m.name.lower(): m
    for m in (
        _qwen2("Qwen2-0.5B", 896, 24, 4864, 14, 2, 151936, True, 0.494 * _E),
        _qwen2("Qwen2-1.5B", 1536, 28, 8960, 12, 2, 151936, True, 1.54 * _E),
        _qwen2("Qwen2-7B", 3584, 28, 18944, 28, 4, 152064, False, 7.62 * _E),
        _qwen2("Qwen2-72B", 8192, 80, 29568, 64, 8, 152064, False, 72.7 * _E),
        _qwen2("Qwen2.5-0.5B", 896, 24, 4864, 14, 2, 151936, True, 0.494 * _E),
        _qwen2("Qwen2.5-1.5B", 1536, 28, 8960, 12, 2, 151936, True, 1.54 * _E),
        _qwen2("Qwen2.5-3B", 2048, 36, 11008, 16, 2, 151936, True, 3.09 * _E),
        _qwen2("Qwen2.5-7B", 3584, 28, 18944, 28, 4, 152064, False, 7.61 * _E),
        _qwen2("Qwen2.5-14B", 5120, 48, 13824, 40, 8, 152064, False, 14.7 * _E),
        _qwen2("Qwen2.5-32B", 5120, 64, 27648, 40, 8, 152064, False, 32.5 * _E),
        _qwen2("Qwen2.5-72B", 8192, 80, 29568, 64, 8, 152064, False, 72.7 * _E),
        _qwen2("DeepSeek-R1-Distill-Qwen-1.5B", 1536, 28, 8960, 12, 2, 151936, False, 1.78 * _E),
        _qwen2("DeepSeek-R1-Distill-Qwen-7B", 3584, 28, 18944, 28, 4, 152064, False, 7.62 * _E),
        _qwen2("DeepSeek-R1-Distill-Qwen-14B", 5120, 48, 13824, 40, 8, 152064, False, 14.8 * _E),
        _qwen2("DeepSeek-R1-Distill-Qwen-32B", 5120, 64, 27648, 40, 8, 152064, False, 32.8 * _E),
        _llama("DeepSeek-R1-Distill-Llama-8B", 4096, 32, 14336, 32, 8, 128256, False, 8.03 * _E),
        _llama("DeepSeek-R1-Distill-Llama-70B", 8192, 80, 28672, 64, 8, 128256, False, 70.6 * _E),
        _qwen3("Qwen3-0.6B", 1024, 28, 3072, 16, True, 0.6 * _E),
        _qwen3("Qwen3-1.7B", 2048, 28, 6144, 16, True, 2.03 * _E),
        _qwen3("Qwen3-4B", 2560, 36, 9728, 32, True, 4.0 * _E),
        _qwen3("Qwen3-8B", 4096, 36, 12288, 32, False, 8.2 * _E),
        _qwen3("Qwen3-14B", 5120, 40, 17408, 40, False, 14.8 * _E),
        _qwen3("Qwen3-32B", 5120, 64, 25600, 64, False, 32.8 * _E),
        _llama("Llama-3.2-1B", 2048, 16, 8192, 32, 8, 128256, True, 1.24 * _E),
        _llama("Llama-3.2-3B", 3072, 28, 8192, 24, 8, 128256, True, 3.21 * _E),
        _llama("Llama-3.1-8B", 4096, 32, 14336, 32, 8, 128256, False, 8.03 * _E),
        _llama("Llama-3.1-70B", 8192, 80, 28672, 64, 8, 128256, False, 70.6 * _E),
        ModelFacts(
            "Qwen3-30B-A3B",
            2048,
            48,
            768,
            32,
            4,
            151936,
            head_dim=128,
            qk_norm=True,
            num_experts=128,
            experts_per_token=8,
            published_params=30.5 * _E,
        ),
        _llama("Phi-4", 5120, 40, 17920, 40, 10, 100352, False, 14.7 * _E),
        _llama("Phi-4-mini", 3072, 32, 8192, 24, 8, 200064, True, 3.84 * _E),
        _llama("Phi-3-mini-4k", 3072, 32, 8192, 32, 32, 32064, False, 3.82 * _E),
        _llama("Phi-3-medium-4k", 5120, 40, 17920, 40, 10, 32064, False, 14.0 * _E),
        _llama("SmolLM-135M", 576, 30, 1536, 9, 3, 49152, True, 0.135 * _E),
        _llama("SmolLM-360M", 960, 32, 2560, 15, 5, 49152, True, 0.362 * _E),
        _llama("SmolLM-1.7B", 2048, 24, 8192, 32, 32, 49152, True, 1.71 * _E),
        ModelFacts("Mistral-Nemo", 5120, 40, 14336, 32, 8, 131072, head_dim=128, published_params=12.2 * _E),
        ModelFacts("Mistral-Small-24B", 5120, 40, 32768, 32, 8, 131072, head_dim=128, published_params=23.6 * _E),
        _gemma("gemma-2-2b", 2304, 26, 9216, 8, 4, 256, 256000, 2.61 * _E, False),
        _gemma("gemma-2-9b", 3584, 42, 14336, 16, 8, 256, 256000, 9.24 * _E, False),
        _gemma("gemma-2-27b", 4608, 46, 36864, 32, 16, 128, 256000, 27.2 * _E, False),
        _gemma("gemma-3-4b", 2560, 34, 10240, 8, 4, 256, 262208, 4.30 * _E, True),
        _gemma("gemma-3-12b", 3840, 48, 15360, 16, 8, 256, 262208, 12.2 * _E, True),
        _gemma("gemma-3-27b", 5376, 62, 21504, 32, 16, 128, 262208, 27.4 * _E, True),
        _olmo2("OLMo-2-0425-1B", 2048, 16, 8192, 16, 16, False, 1.48 * _E),
        _olmo2("OLMo-2-1124-7B", 4096, 32, 11008, 32, 32, False, 7.30 * _E),
        _olmo2("OLMo-2-1124-13B", 5120, 40, 13824, 40, 40, False, 13.7 * _E),
        _olmo2("OLMo-2-0325-32B", 5120, 64, 27648, 40, 8, False, 32.2 * _E),
        _llama("SmolLM2-135M", 576, 30, 1536, 9, 3, 49152, True, 0.135 * _E),
        _llama("SmolLM2-360M", 960, 32, 2560, 15, 5, 49152, True, 0.362 * _E),
        _llama("SmolLM2-1.7B", 2048, 24, 8192, 32, 32, 49152, True, 1.71 * _E),
        _llama("Mistral-7B-v0.3", 4096, 32, 14336, 32, 8, 32768, False, 7.25 * _E),
        _llama("Mistral-7B-v0.1", 4096, 32, 14336, 32, 8, 32000, False, 7.24 * _E),
        ModelFacts(
            "Mixtral-8x7B-v0.1",
            4096,
            32,
            14336,
            32,
            8,
            32000,
            num_experts=8,
            experts_per_token=2,
            published_params=46.7 * _E,
        ),
        ModelFacts(
            "gemma-3-1b",
            1152,
            26,
            6912,
            4,
            1,
            262144,
            head_dim=256,
            tie_word_embeddings=True,
            qk_norm=True,
            norms_per_layer=4,
            published_params=1.0 * _E,
        ),
        ModelFacts(
            "gemma-3-270m",
            640,
            18,
            2048,
            4,
            1,
            262144,
            head_dim=256,
            tie_word_embeddings=True,
            qk_norm=True,
            norms_per_layer=4,
            published_params=0.268 * _E,
        ),
    )
}

# `grpo demo demo`'s model (grpo_runtime.model.tiny), which the CLI and a service with runs on write as demo/model:
# known by that path, so the Demo recipe gets its estimate from the service, which reads no model file a client
# names. A test holds these numbers to the config.json the demo writes.
DEMO_MODEL_PATH = "demo/model"
DEMO_MODEL = ModelFacts("grpo demo's tiny model (demo/model)", 64, 2, 128, 4, 2, 29, head_dim=16, torch_dtype="float32")


def demo_model(name_or_path: str) -> ModelFacts | None:
    """The demo's model for its path as the Demo recipe writes it (demo/model, ./demo/model), else None."""
    return DEMO_MODEL if name_or_path.strip().rstrip("/").removeprefix("./") == DEMO_MODEL_PATH else None


# The Hub's safetensors total for these stores the tied embedding twice (as lm_head too): compare it with the
# computed total plus one embedding matrix.
HUB_TOTAL_COUNTS_TIED_HEAD = {"qwen3-1.7b"}
# Gemma 3 4B, 12B and 27B are image-text models: their published totals include a SigLIP vision tower of about
# 0.417B parameters that GRPO on text never runs; the catalogue holds the language model only.
VISION_TOWER_PARAMS = {"gemma-3-4b": 0.417 * _E, "gemma-3-12b": 0.417 * _E, "gemma-3-27b": 0.417 * _E}

ALIASES = {
    "llama-3.3-70b": "llama-3.1-70b",
    "meta-llama-3.1-8b": "llama-3.1-8b",
    "meta-llama-3-8b": "llama-3.1-8b",
    "llama-3-8b": "llama-3.1-8b",
    "llama-3-70b": "llama-3.1-70b",
    "mistral-7b-v0.2": "mistral-7b-v0.3",
    "mistral-7b": "mistral-7b-v0.1",
    "mixtral-8x7b": "mixtral-8x7b-v0.1",
    "phi4": "phi-4",
    "llama-3.2-1b-instruct": "llama-3.2-1b",
    "meta-llama-3-70b": "llama-3.1-70b",
    "meta-llama-3.1-70b": "llama-3.1-70b",
    "phi-3.5-mini": "phi-3-mini-4k",
    "phi-3-mini-128k": "phi-3-mini-4k",
    "phi-3-medium-128k": "phi-3-medium-4k",
    "phi-4-mini-reasoning": "phi-4-mini",
    "phi-4-reasoning": "phi-4",
    "phi-4-reasoning-plus": "phi-4",
    "mistral-nemo-base": "mistral-nemo",
    "mistral-small-24b-base": "mistral-small-24b",
    "mistral-small-24b-instruct": "mistral-small-24b",
    "olmo-2-1b": "olmo-2-0425-1b",
    "olmo-2-7b": "olmo-2-1124-7b",
    "olmo-2-13b": "olmo-2-1124-13b",
    "olmo-2-32b": "olmo-2-0325-32b",
    "qwq-32b": "qwen2.5-32b",
    "mistral-7b-instruct-v0.3": "mistral-7b-v0.3",
    "mistral-7b-instruct-v0.2": "mistral-7b-v0.1",
    "mistral-7b-instruct-v0.1": "mistral-7b-v0.1",
    "deepseek-r1-0528-qwen3-8b": "qwen3-8b",
}
_SUFFIXES = re.compile(
    r"(-(instruct|it|base|chat|pt|hf|fp16|bf16|sft|dpo|rlvr|grpo|2507|\d{4}|v\d+(\.\d+)*-?instruct))+$"
)
_VARIANTS = re.compile(r"-(math|coder)(?=-)")


def lookup(name_or_path: str) -> ModelFacts | None:
    """The catalogue entry for a Hub name such as 'Qwen/Qwen2.5-Math-7B-Instruct', or None."""
    base = name_or_path.strip().rstrip("/").split("/")[-1].lower()
    for candidate in (base, _SUFFIXES.sub("", base), _VARIANTS.sub("", _SUFFIXES.sub("", base))):
        candidate = ALIASES.get(candidate, candidate)
        if candidate in MODELS:
            return MODELS[candidate]
    return None
