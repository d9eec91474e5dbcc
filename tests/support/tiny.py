"""The tiny random-init model and word-level tokenizer the tests train (built locally, nothing is downloaded).

The one import of the runtime's tiny-model module in tests/: when that module moves, only this line changes.
"""

from grpo_runtime.model.tiny import VLLM_SHAPE, VOCABULARY, build_model, build_tokenizer, save_tiny_model  # noqa: F401
