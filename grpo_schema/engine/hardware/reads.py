"""Which files a config names the planner may read, and from where.

`grpo plan` and `grpo validate --hardware` read them all, relative paths from the working directory. The service
reads none unless its operator enabled runs; then it reads the model folder (config.json, tokenizer) and the dataset
a run would read, relative paths from the service's folder, and nothing else (grpo_web.runs.paths decides which).
Whatever is not read is named in the plan's assumptions with the reason, so the text says why a default was used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

MODEL, DATASET = "model_name_or_path", "dataset_name"
TEMPLATE = "chat_template"  # a template written in the config (an open-r1 recipe's): rendered only where allowed


@dataclass(frozen=True)
class LocalReads:
    model: bool = True  # model_name_or_path's config.json and tokenizer (a local folder, else the Hub cache)
    dataset: bool = True  # dataset_name's rows (a local file or folder, else the Hugging Face caches)
    base: Path | None = None  # relative paths are read from here, and named relative to it; None: the working dir
    refused: Mapping[str, str] = field(default_factory=dict)  # field (or TEMPLATE) -> why it was not read
    prompt_option: str = "--prompt-length"  # how a prompt length is given where the plan is shown

    def where(self, value: str) -> Path:
        """The path a relative or absolute value names, as this surface reads it."""
        path = Path(value).expanduser()
        return path if self.base is None or path.is_absolute() else self.base / path


def shown(path: Path, base: Path | None) -> str:
    """A path as the plan names it: relative to `base` when it lies there, so the service's text for
    `demo/data` is the text `grpo plan` prints in the service's folder."""
    if base is not None:
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    return str(path)


EVERYTHING = LocalReads()
# The service with runs off, and its other surfaces: the built-in catalogue only, no data.
NOTHING = LocalReads(
    model=False,
    dataset=False,
    prompt_option="prompt_length",
    refused={DATASET: "the service reads no dataset", MODEL: "the service reads no model folder"},
)
