"""The environment of the processes the tests start, free ports and waiting for a condition."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Callable

# Nothing reaches the model hub, and the tiny models run fastest on one intra-op thread: on a busy 2-core machine
# several threads per process spin against each other.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
}


def offline_env(**extra: str) -> dict[str, str]:
    """This process's environment with OFFLINE_ENV and `extra` on top: for a child process."""
    return {**os.environ, **OFFLINE_ENV, **extra}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(
    predicate: Callable[[], bool], timeout: float, what: str, explain: Callable[[], str] = str, every: float = 0.2
) -> None:
    """Poll `predicate` until it holds; after `timeout` seconds fail, saying what was awaited and `explain()`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{explain()}")
        time.sleep(every)


def training_processes(marker: str) -> list[str]:
    """Command lines of this machine's processes that name `marker` (the run's output_dir)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in line and "pytest" not in line:
            found.append(f"{entry.name}: {line[:200]}")
    return found


def wait_until_gone(marker: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while (left := training_processes(marker)) and time.time() < deadline:
        time.sleep(1)
    assert not left, left
