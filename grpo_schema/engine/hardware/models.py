"""Model facts for the memory and time estimates: the architecture numbers, and parameter counts computed from
them (never parsed from a name).

Where the facts come from, in order: `model_name_or_path` as a local directory (its config.json), the Hugging
Face Hub cache when the model is already there (HF_HUB_CACHE / HF_HOME; nothing is ever downloaded), else the
built-in catalogue of common families (grpo_schema.engine.hardware.catalogue), else "unknown model".
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class ModelFacts:
    name: str
    hidden_size: int
    num_layers: int
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    head_dim: int | None = None  # default hidden_size / num_heads
    tie_word_embeddings: bool = False
    attention_bias: bool = False  # q/k/v biases (Qwen2)
    qk_norm: bool = False  # per-head q/k RMSNorm (Qwen3, Gemma 3)
    norms_per_layer: int = 2  # Gemma 3 has 4
    num_experts: int = 0  # Mixture of Experts: experts per layer (0: dense)
    experts_per_token: int = 0
    torch_dtype: str = "bfloat16"  # the dtype the checkpoint is stored in ('auto' loads this)
    source: str = "catalogue"  # "catalogue" | a config.json path
    published_params: float | None = None  # the model card's total, for the catalogue's own check

    @property
    def dim_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads

    @property
    def q_width(self) -> int:
        return self.num_heads * self.dim_head

    @property
    def kv_width(self) -> int:
        return self.num_kv_heads * self.dim_head

    def attention_params(self) -> int:
        h, q, kv = self.hidden_size, self.q_width, self.kv_width
        out = h * q + 2 * h * kv + q * h
        if self.attention_bias:
            out += q + 2 * kv
        if self.qk_norm:
            out += 2 * self.dim_head
        return out

    def mlp_params(self, active_only: bool = False) -> int:
        one = 3 * self.hidden_size * self.intermediate_size  # gate, up, down
        if not self.num_experts:
            return one
        experts = self.experts_per_token if active_only else self.num_experts
        return experts * one + self.hidden_size * self.num_experts  # + the router

    def layer_params(self, active_only: bool = False) -> int:
        return self.attention_params() + self.mlp_params(active_only) + self.norms_per_layer * self.hidden_size

    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    def total_params(self) -> int:
        head = 0 if self.tie_word_embeddings else self.embedding_params()
        return self.embedding_params() + head + self.num_layers * self.layer_params() + self.hidden_size

    def active_params(self) -> int:
        """Parameters one token passes through (all of them for a dense model); the FLOPs count these."""
        head = 0 if self.tie_word_embeddings else self.embedding_params()
        return self.embedding_params() + head + self.num_layers * self.layer_params(True) + self.hidden_size

    def largest_layer_params(self) -> int:
        """The biggest single parameter block ZeRO-3 gathers at once: the embedding, or one decoder layer."""
        return max(self.embedding_params(), self.layer_params())

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear of one decoder layer, by the module names LoRA targets."""
        h, q, kv, i = self.hidden_size, self.q_width, self.kv_width, self.intermediate_size
        return {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, i),
            "up_proj": (h, i),
            "down_proj": (i, h),
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(total_params=self.total_params(), active_params=self.active_params())
        return out


def _first(config: dict, *names: str, default: Any = None) -> Any:
    return next((config[n] for n in names if isinstance(config.get(n), (int, float, str, bool))), default)


def facts_from_config(config: dict[str, Any], name: str, source: str) -> ModelFacts:
    """ModelFacts from a transformers config.json mapping (a multimodal one's text_config is used)."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    heads = int(_first(text, "num_attention_heads", "n_head"))
    experts = int(_first(text, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
    intermediate = _first(text, "intermediate_size", "n_inner", default=None)
    if experts and text.get("moe_intermediate_size"):
        intermediate = text["moe_intermediate_size"]
    hidden = int(_first(text, "hidden_size", "n_embd", "d_model"))
    return ModelFacts(
        name=name,
        hidden_size=hidden,
        num_layers=int(_first(text, "num_hidden_layers", "n_layer")),
        intermediate_size=int(intermediate or 4 * hidden),
        num_heads=heads,
        num_kv_heads=int(_first(text, "num_key_value_heads", default=heads)),
        vocab_size=int(text["vocab_size"]),
        head_dim=_first(text, "head_dim", default=None),
        tie_word_embeddings=bool(
            _first(config, "tie_word_embeddings", default=_first(text, "tie_word_embeddings", default=False))
        ),
        attention_bias=bool(text.get("attention_bias") or model_type.startswith("qwen2")),
        qk_norm=model_type.startswith(("qwen3", "gemma3")),
        norms_per_layer=4 if model_type.startswith("gemma") and model_type != "gemma" else 2,
        num_experts=experts,
        experts_per_token=int(_first(text, "num_experts_per_tok", default=0) or 0),
        torch_dtype=str(
            _first(config, "torch_dtype", "dtype", default=_first(text, "torch_dtype", "dtype", default="float32"))
        ),
        source=source,
    )


def hub_cache_dirs() -> list[Path]:
    """Where the Hub cache would be, from the usual variables (read only; never created)."""
    if os.environ.get("HF_HUB_CACHE"):
        return [Path(os.environ["HF_HUB_CACHE"])]
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    return [home / "hub"]


def find_local_config(name_or_path: str, revision: str | None = None, base: Path | None = None) -> Path | None:
    """config.json of a local directory (a relative one read from `base`, else the working directory), or of a
    model already in the Hub cache; None otherwise."""
    candidate = Path(name_or_path).expanduser()
    if base is not None and not candidate.is_absolute():
        candidate = base / candidate
    try:
        if candidate.is_file() and candidate.name.endswith(".json"):
            return candidate
        if (candidate / "config.json").is_file():
            return candidate / "config.json"
    except OSError:
        return None
    if name_or_path.count("/") != 1:
        return None
    for cache in hub_cache_dirs():
        repo = cache / ("models--" + name_or_path.replace("/", "--"))
        try:
            if ".." in Path(revision or "main").parts:  # a revision names a ref in the cache, never a path out of it
                raise OSError("not a revision")
            ref = (repo / "refs" / (revision or "main")).read_text().strip()
            path = repo / "snapshots" / ref / "config.json"
            if path.is_file():
                return path
            snapshots = sorted((repo / "snapshots").glob("*/config.json"))
        except OSError:
            snapshots = sorted((repo / "snapshots").glob("*/config.json")) if (repo / "snapshots").is_dir() else []
        if snapshots:
            return snapshots[-1]
    return None


class UnknownModel(LookupError):
    pass


def read_config_json(path: str | Path, name: str | None = None) -> ModelFacts:
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise UnknownModel(f"{path}: too large for a config.json")
        config = json.loads(path.read_text(encoding="utf-8"))
        return facts_from_config(config, name or str(path.parent), str(path))
    except OSError as exc:
        raise UnknownModel(f"cannot read {path}: {exc.strerror or exc}")
    except (ValueError, KeyError, TypeError) as exc:
        raise UnknownModel(f"{path} is not a decoder config.json this estimate understands ({exc})")
