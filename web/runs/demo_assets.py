"""The demo's model and prompts, made by the service so that the form's Demo recipe trains on its first launch.

The Demo recipe (examples/demo.yaml) names `demo/model` and `demo/data`, which `grpo demo demo` writes. The service
reads relative paths from its own folder (grpo_web.runs.paths), so when runs start it writes them there if they are
missing, in a thread: `python -m grpo_schema demo demo` on the service's interpreter (the service itself never
imports torch). A launch that names the demo's paths waits for it; when it is off or fails, the launch is refused
with GRPO-X010 (grpo_schema.engine.policy_paths.missing_local_paths), which says how to make them.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from grpo_schema.engine.policy_paths import DEMO_READS

log = logging.getLogger("grpo_web.runs")

DEMO_DIR = "demo"  # `grpo demo demo`
NEEDED = ("model/config.json", "data/train.jsonl")  # what `grpo demo` writes, relative to DEMO_DIR
TIMEOUT_S = 600.0


def missing(base: Path) -> bool:
    return not all((base / DEMO_DIR / name).is_file() for name in NEEDED)


def names_demo(config: Any) -> bool:
    """Whether the config reads one of the demo's paths (as the Demo recipe writes them)."""
    return any(getattr(config, name, None) == value for name, value in DEMO_READS.items())


class DemoAssets:
    """Writes BASE/demo once, in a thread; `wait` blocks until that is done. `error` says why it failed."""

    def __init__(self, base: Path):
        self.base = base
        self.error: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._prepare, name="demo-assets", daemon=True)

    def start(self) -> "DemoAssets":
        if missing(self.base):
            self._thread.start()
        else:
            self._done.set()
        return self

    def wait(self, timeout: float = TIMEOUT_S) -> bool:
        return self._done.wait(timeout)

    def _prepare(self) -> None:
        command = [sys.executable, "-m", "grpo_schema", "demo", DEMO_DIR]
        log.info("writing the demo's model and prompts: %s (in %s)", " ".join(command[2:]), self.base)
        try:
            done = subprocess.run(
                command, cwd=self.base, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
            )
            if done.returncode != 0:
                last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                self.error = f"`grpo demo demo` exited with code {done.returncode}: {last[0]}"
        except (OSError, subprocess.TimeoutExpired) as error:
            self.error = f"`grpo demo demo` could not run: {error}"
        if self.error:
            log.error("the demo's model and prompts were not written: %s", self.error)
        self._done.set()
