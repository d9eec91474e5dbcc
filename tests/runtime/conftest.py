"""Shared fixtures for the runtime tests: everything is built locally, nothing is downloaded."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The tiny test models multiply 64-wide matrices: one intra-op thread is fastest, and on a busy 2-core machine
# several threads per process (times 2 processes in the launch test) spin against each other and run 50x slower.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

torch = pytest.importorskip("torch", reason="the runtime tests need torch (pip install -e '.[runtime]')")
pytest.importorskip("transformers", reason="the runtime tests need transformers (pip install -e '.[runtime]')")
torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A saved random-init tiny Qwen2 + word-level tokenizer (grpo_runtime.model.tiny), shared by the session."""
    from grpo_runtime.model.tiny import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def tiny_policy():
    """(the tiny random-init model in train mode, as while training; its tokenizer), built in memory."""
    from grpo_runtime.model.tiny import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    return build_model(tokenizer).train(), tokenizer
