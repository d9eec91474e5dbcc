"""`grpo smoke`'s model: the checkpoint as it is when it is small and on disk, else a random-init model of the same
architecture class at toy sizes, with the real tokenizer when it is on disk (a byte-level one otherwise); the same
for a reward model. A vision-language model is refused, not stood in for by a text model."""

from __future__ import annotations

from pathlib import Path

from grpo_runtime.model.modality import named_vision_language, vision_language_class
from grpo_runtime.smoke.cpu import cpu_description
from grpo_runtime.smoke.plan import (
    ELSEWHERE,
    EXERCISED,
    SUBSTITUTED,
    SmokePlan,
    SmokeRefused,
    another_machines,
    refuse_strict,
)

SMALL_MODEL_PARAMS = 60e6  # a local model this small runs as it is


def model_folder(name: str, revision: str | None) -> Path | None:
    """The folder holding the model's config.json: a local folder, or a snapshot in the Hub cache."""
    from grpo_schema.engine.hardware.models import find_local_config

    found = find_local_config(name, revision)
    return found.parent if found is not None else None


def catalogue_config(name: str):
    """A transformers config of the model's architecture class from the built-in catalogue's facts, or None."""
    from grpo_schema.engine.hardware.catalogue import lookup

    facts = lookup(name)
    if facts is None:
        return None, None
    import transformers

    lowered = name.lower()
    if "phi-4" in lowered or "phi4" in lowered:
        kind = "Phi3Config"
    elif "mistral" in lowered:
        kind = "MistralConfig"
    elif facts.qk_norm:
        kind = "Qwen3Config"
    elif facts.attention_bias:
        kind = "Qwen2Config"
    else:
        kind = "LlamaConfig"
    config = getattr(transformers, kind)(tie_word_embeddings=facts.tie_word_embeddings)
    return config, facts


# A head size every engine's CPU attention has a kernel for on every instruction set: vLLM builds its CPU attention
# for head sizes 32, 64, ..., 256 on each ISA (AMX, AVX-512, generic vectors, NEON), and 80 and 112 on one only; 16
# is refused ("Unsupported CPU attention configuration") on a CPU with AVX-512 or AMX.
HEAD_DIM = 32
MIN_CONTEXT = 4096  # positions the stand-in has at least; a recipe's context length raises it


def context_length(config) -> int:
    """Positions the stand-in must hold: the recipe's vLLM context length, its prompt plus completion lengths."""
    declared = [getattr(config, key, None) for key in ("vllm_max_model_length", "vllm_max_model_len")]
    prompt, completion = (getattr(config, key, None) for key in ("max_prompt_length", "max_completion_length"))
    if isinstance(prompt, int) and isinstance(completion, int):
        declared.append(prompt + completion)
    return max([MIN_CONTEXT, *(n for n in declared if isinstance(n, int) and not isinstance(n, bool))])


def shrink(config, vocab_size: int, tokenizer, positions: int = MIN_CONTEXT):
    """The same architecture class at toy sizes: 2 layers, hidden 64, 2 heads of HEAD_DIM (1 key/value head), MLP
    128, at least `positions` positions."""
    sizes = dict(
        num_hidden_layers=2,
        hidden_size=64,
        intermediate_size=128,
        num_attention_heads=64 // HEAD_DIM,
        num_key_value_heads=1,
        head_dim=HEAD_DIM,
        max_position_embeddings=positions,
        max_window_layers=2,
        moe_intermediate_size=64,
        shared_expert_intermediate_size=64,
        num_experts=4,
        n_routed_experts=4,
        num_local_experts=4,
        num_experts_per_tok=2,
        first_k_dense_replace=0,
        kv_lora_rank=16,
        q_lora_rank=16,
        qk_rope_head_dim=HEAD_DIM // 2,
        qk_nope_head_dim=HEAD_DIM // 2,
        v_head_dim=HEAD_DIM,
    )
    text = getattr(config, "text_config", None)
    for target in [config] + ([text] if text is not None and text is not config else []):
        for key, value in sizes.items():
            if hasattr(target, key) and getattr(target, key) is not None:
                setattr(target, key, value)
        if getattr(target, "layer_types", None):
            target.layer_types = list(target.layer_types[:2])
        if hasattr(target, "sliding_window") and getattr(target, "use_sliding_window", False):
            target.use_sliding_window = False
        target.vocab_size = vocab_size
        target.pad_token_id = tokenizer.pad_token_id
        target.eos_token_id = tokenizer.eos_token_id
        target.bos_token_id = tokenizer.bos_token_id
    if getattr(config, "quantization_config", None) is not None:
        del config.quantization_config
    return config


def local_tokenizer(folder: Path | None):
    if folder is None:
        return None
    if not any((folder / name).exists() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json")):
        return None
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception:  # an unreadable tokenizer is replaced and said so
        return None


def substitute_model(config, plan: SmokePlan, workdir: Path) -> None:
    plan.add(
        "CPU",
        EXERCISED,
        f"{cpu_description()} (a stand-in's head size, {HEAD_DIM}, has a CPU attention "
        "kernel on every instruction set)",
    )
    name = str(config.model_name_or_path)
    elsewhere = another_machines(name)
    if elsewhere:
        refuse_strict(plan, "model", "model", name, "model_name_or_path")
    folder = None if elsewhere else model_folder(name, config.model_revision)
    if folder is not None:
        model_config, source = _local_model_config(config, plan, name, folder)
        if model_config is None:  # small enough to run as it is
            return
    else:
        model_config, source = _catalogue_model_config(name, elsewhere)
    tokenizer = _stand_in_tokenizer(plan, name, folder)
    shrunk = shrink(model_config, len(tokenizer), tokenizer, context_length(config))
    model = _random_model(config, plan, name, shrunk)
    for key in ("eos_token_id", "pad_token_id", "bos_token_id"):
        setattr(model.generation_config, key, getattr(tokenizer, key))
    target = workdir / "model"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    if folder is None:
        check_tokenizer_reloads(target, tokenizer)
    layers = (
        f"2 layers, hidden 64, {64 // HEAD_DIM} heads of {HEAD_DIM}, MLP 128, vocab {len(tokenizer)}, "
        f"{shrunk.max_position_embeddings} positions"
    )
    plan.add("model", SUBSTITUTED, f"a random-init {type(model).__name__} ({layers}; from {source}) instead of {name}")

    plan.overrides.update(model_name_or_path=str(target), model_revision=None)
    substitute_reward_model(config, plan, workdir, shrunk, tokenizer)


def _local_model_config(config, plan: SmokePlan, name: str, folder: Path):
    """The model on disk: (its config, where it came from) to shrink, or (None, "") when it is small enough to
    run as it is (said in the plan)."""
    from transformers import AutoConfig

    try:
        model_config = AutoConfig.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=config.trust_remote_code
        )
    except (ValueError, KeyError) as error:
        raise SmokeRefused(
            "model",
            f"the model {name} ({folder / 'config.json'}) has an architecture that "
            f"transformers does not know: {str(error).splitlines()[0]}",
            "model_name_or_path",
        ) from None
    refuse_vision_language(name, vision_language_class(model_config), "its config.json")
    from grpo_schema.engine.hardware.models import read_config_json

    try:
        facts = read_config_json(folder / "config.json", name)
    except Exception:  # only used to decide whether the model is small
        facts = None
    if facts is not None and facts.total_params() <= SMALL_MODEL_PARAMS:
        plan.add("model", EXERCISED, f"{name} as it is ({facts.total_params() / 1e6:.1f}M parameters, local)")
        plan.add("tokenizer and chat template", EXERCISED, f"the model's own tokenizer ({folder})")
        return None, ""
    return model_config, f"its config.json ({folder})"


def _catalogue_model_config(name: str, elsewhere: bool):
    """A model not on this machine: (the catalogue's config for it, else a Llama-class one, where it came from)."""
    refuse_vision_language(name, named_vision_language(name), "its name")
    model_config, _facts = catalogue_config(Path(name).name if elsewhere else name)
    source = "the built-in catalogue's facts"
    if elsewhere:
        source = f"{ELSEWHERE}: {name} is not on this machine; " + (
            f"the catalogue's facts for {Path(name).name}" if model_config is not None else ""
        )
    if model_config is None:
        from transformers import LlamaConfig

        model_config = LlamaConfig(tie_word_embeddings=False)
        source = (source if elsewhere else "") + "nothing (not on disk, not in the catalogue): a Llama-class model"
    return model_config, source


def _stand_in_tokenizer(plan: SmokePlan, name: str, folder: Path | None):
    """The model's own tokenizer where it is on disk, else a byte-level one (said in the plan)."""
    tokenizer = local_tokenizer(folder)
    if tokenizer is not None:
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        plan.add("tokenizer and chat template", EXERCISED, f"the real tokenizer and chat template ({folder})")
        return tokenizer
    from grpo_runtime.model.tiny import build_byte_tokenizer

    tokenizer = build_byte_tokenizer()
    plan.add(
        "tokenizer and chat template",
        SUBSTITUTED,
        f"a byte-level tokenizer of {len(tokenizer)} tokens with a ChatML chat template (the real tokenizer of {name} is "
        "not on disk; a profile's chat_template still applies)",
    )
    return tokenizer


def _random_model(config, plan: SmokePlan, name: str, shrunk):
    """A randomly initialised causal LM of the shrunk config, seeded by the plan."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(plan.seed)
    try:
        return AutoModelForCausalLM.from_config(shrunk, dtype=torch.float32, trust_remote_code=config.trust_remote_code)
    except ValueError as error:
        raise SmokeRefused(
            "model",
            f"transformers cannot build a causal LM of {name}'s architecture "
            f"({type(shrunk).__name__}): {str(error).splitlines()[0]}",
            "model_name_or_path",
        ) from None


def refuse_vision_language(name: str, found: str | None, how: str) -> None:
    """A vision-language policy is refused, not stood in for by a text model: a smoke that passed on text alone
    would say nothing of the run, which trains on the dataset's images."""
    if found is not None:
        raise SmokeRefused(
            "model",
            f"{name} is a vision-language model ({how} says {found}): grpo_runtime trains "
            "text-only causal LMs and the smoke builds no vision-language stand-in; TRL's trainer "
            "(`trl grpo`) trains such models on the dataset's images",
            "model_name_or_path",
        )


def substitute_reward_model(config, plan: SmokePlan, workdir: Path, shrunk, tokenizer) -> None:
    """reward_model_name_or_path: a random-init sequence classifier (one label) of the stand-in's sizes when the
    reward model is not on this machine (a path of another machine, or a Hub model that is not cached)."""
    name = config.reward_model_name_or_path
    if not name:
        return
    elsewhere = another_machines(str(name))
    if elsewhere:
        refuse_strict(plan, "reward model", "reward model", str(name), "reward_model_name_or_path")
    elif Path(str(name)).expanduser().exists() or model_folder(str(name), None) is not None:
        plan.add("reward model", EXERCISED, f"{name} as it is (local or cached)")
        return
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(plan.seed + 1)
    classifier = AutoModelForSequenceClassification.from_config(shrunk, num_labels=1, dtype=torch.float32)
    classifier.config.pad_token_id = tokenizer.pad_token_id
    target = workdir / "reward_model"
    classifier.save_pretrained(target)
    tokenizer.save_pretrained(target)
    why = f"{ELSEWHERE}: {name} is not on this machine" if elsewhere else f"{name} is not on disk or in the cache"
    plan.add(
        "reward model",
        SUBSTITUTED,
        f"a random-init {type(classifier).__name__} of the stand-in's sizes ({why}; nothing is downloaded)",
    )
    plan.overrides["reward_model_name_or_path"] = str(target)


def check_tokenizer_reloads(folder: Path, tokenizer) -> None:
    """`AutoTokenizer` may pick the architecture's own tokenizer class for a saved folder; the ids must survive."""
    from transformers import AutoTokenizer

    sample = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 1 + 1?"}], tokenize=False, add_generation_prompt=True
    )
    again = AutoTokenizer.from_pretrained(str(folder))
    if again(sample).input_ids != tokenizer(sample).input_ids:
        raise SmokeRefused("tokenizer", f"the substitute tokenizer does not survive a reload as {type(again).__name__}")
