"""A tiny word-level tokenizer and random-init causal LM, built locally with no download.

Used by `grpo demo` and by the tests: the vocabulary is a few dozen whole words, the model a 2-layer Llama-style
decoder with hidden size 64, so a training step takes milliseconds on a laptop CPU.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]
ROLE_WORDS = ["system", "user", "assistant"]
TARGET_WORDS = ["cat", "dog", "sun", "moon", "tree", "fish", "bird", "star"]
FILLER_WORDS = ["say", "the", "word", "please", "a", "is", "and", "one", "two", "three", "yes", "no", "blue", "red"]
VOCABULARY = SPECIAL_TOKENS + ROLE_WORDS + TARGET_WORDS + FILLER_WORDS

# ChatML-like: every token is a whole word separated by spaces, so the word-level tokenizer reads it back exactly.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def build_tokenizer(vocab_size: int | None = None):
    """A fast tokenizer over VOCABULARY: pad id 0, eos `<|im_end|>` (id 3), left padding, a chat template.
    With `vocab_size`, filler words `w29`, `w30`, ... widen it to that size, so a model with a real-sized
    vocabulary (and LM head) can decode whatever it samples."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = VOCABULARY + [f"w{i}" for i in range(len(VOCABULARY), vocab_size or 0)]
    vocab = {word: i for i, word in enumerate(words)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece(prefix="##")  # joins words with single spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<|im_end|>",
        padding_side="left",
        truncation_side="left",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_model(
    tokenizer, hidden_size: int = 64, num_layers: int = 2, seed: int = 0, num_heads: int = 4, max_positions: int = 256
):
    """A random-init Llama-architecture causal LM sized for the tokenizer; the same seed gives the same weights.
    Its head size is hidden_size / num_heads (16 by default; vLLM's CPU attention needs 64, see VLLM_SHAPE).

    (Llama rather than Qwen2: `AutoTokenizer` replaces the tokenizer of a saved Qwen2 model with Qwen2's own
    byte-level class, which would not read this word-level vocabulary.)"""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=max(num_heads // 2, 1),
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = None
    return model


# A shape vLLM serves on CPU too: its CPU attention kernels refuse head size 16 but take 64.
VLLM_SHAPE = dict(hidden_size=128, num_heads=2)


def save_tiny_model(
    directory: str | Path,
    hidden_size: int = 64,
    num_layers: int = 2,
    seed: int = 0,
    num_heads: int = 4,
    vocab_size: int | None = None,
    max_positions: int = 256,
) -> Path:
    """Build the tokenizer and model and save both to `directory` (loadable with `from_pretrained`)."""
    directory = Path(directory)
    tokenizer = build_tokenizer(vocab_size)
    model = build_model(tokenizer, hidden_size, num_layers, seed, num_heads, max_positions)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


# ChatML, as Qwen's templates write it (`grpo smoke`'s stand-in when a model's real tokenizer is not on disk).
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_byte_tokenizer():
    """A byte-level BPE tokenizer without merges (one token per byte, so any text survives) plus `<|endoftext|>`
    (pad), `<|im_end|>` (eos) and `<|im_start|>`, with a ChatML chat template. Unlike the word-level tokenizer it
    reloads unchanged as Qwen2's own tokenizer class, which `AutoTokenizer` picks for a saved Qwen2/Qwen3 model."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {char: i for i, char in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, padding_side="left", truncation_side="left")
    tokenizer.add_special_tokens(
        {"pad_token": "<|endoftext|>", "eos_token": "<|im_end|>", "additional_special_tokens": ["<|im_start|>"]}
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer
