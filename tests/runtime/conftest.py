"""Shared fixtures for the runtime tests: everything is built locally, nothing is downloaded (the saved tiny model,
`tiny_model_dir`, is the run's: tests/support/fixtures.py)."""

import os

import pytest

from tests.support.env import OFFLINE_ENV

# Nothing reaches the hub; the rest of the offline environment where the caller has not set it. One intra-op thread
# (OMP_NUM_THREADS): the tiny models multiply 64-wide matrices, and on a busy 2-core machine several threads per
# process (times 2 processes in the launch test) spin against each other and run 50x slower.
os.environ["HF_HUB_OFFLINE"] = "1"
for _name, _value in OFFLINE_ENV.items():
    os.environ.setdefault(_name, _value)

torch = pytest.importorskip("torch", reason="the runtime tests need torch (pip install -e '.[runtime]')")
pytest.importorskip("transformers", reason="the runtime tests need transformers (pip install -e '.[runtime]')")
torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.fixture(scope="module")
def tiny_policy():
    """(the tiny random-init model in train mode, as while training; its tokenizer), built in memory."""
    from tests.support.tiny import build_model, build_tokenizer

    tokenizer = build_tokenizer()
    return build_model(tokenizer).train(), tokenizer
