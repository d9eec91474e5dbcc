"""What `grpo smoke` changes in a config so that it runs on this machine's CPUs in about a minute, and why.

Only what cannot run here is substituted, each change stated: the model (a small random-init model of the same
architecture class), the tokenizer (when the real one is not on disk), the dataset (when it is neither local nor
cached), GPU-only settings, the completion length, the world size, the output folder and the step counts. The
result is a list of `--set` overrides on the user's own file (so positions, relative paths and profiles stay those
of the file) and one line per setting group.

This module is the plan itself and what every part shares (a path of another machine, the config line a finding
points at); each part of the config has a module of its own: smoke_model (the model, tokenizer and reward model),
smoke_data (the dataset), smoke_settings (GPU-only settings, DeepSpeed, the world size and the batch bound),
smoke_code (a code reward's sandbox).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

EXERCISED, SUBSTITUTED, NOT_EXERCISED = "exercised", "substituted", "not_exercised"


class SmokeRefused(Exception):
    """A named problem found before anything starts (exit 3): `component` is what it is about, `key` its field."""

    def __init__(self, component: str, message: str, key: str | None = None, needle: str | None = None):
        super().__init__(message)
        self.component, self.key, self.needle = component, key, needle


@dataclass
class Group:
    group: str
    status: str
    detail: str

    def to_dict(self) -> dict:
        return {"group": self.group, "status": self.status, "detail": self.detail}


@dataclass
class SmokePlan:
    overrides: dict = field(default_factory=dict)  # key -> value, applied after the user's own --set
    groups: list[Group] = field(default_factory=list)
    world_size: int = 1
    env: dict = field(default_factory=dict)
    seed: int = 0  # the stand-ins' seed, drawn from the file's content (content_seed): the same file, the same run
    strict_paths: bool = False  # --strict-paths: a path that does not exist here is refused, never substituted

    def add(self, group: str, status: str, detail: str) -> None:
        self.groups.append(Group(group, status, detail))

    def set_strings(self) -> list[str]:
        return [f"{key}={json.dumps(value)}" for key, value in self.overrides.items()]


def content_seed(path: str, overrides: list[str], profiles: list[str]) -> int:
    """The seed of everything the smoke makes up (the stand-in model's weights, the synthetic rows): drawn from
    the file's bytes and the command's --set and --profile, so the same file smokes the same way on every run."""
    import hashlib

    digest = hashlib.sha256()
    try:
        digest.update(Path(path).read_bytes())
    except OSError:
        digest.update(str(path).encode())
    for item in [*overrides, "--profile", *profiles]:
        digest.update(b"\0" + str(item).encode())
    return int.from_bytes(digest.digest()[:4], "big")


ELSEWHERE = "path of another machine"


def another_machines(path) -> bool:
    """A path (absolute, ./, ~, or with more than one slash) that does not exist on this machine: written on the
    cluster the file comes from."""
    return isinstance(path, str) and looks_local(path) and not Path(path).expanduser().exists()


def refuse_strict(plan: SmokePlan, component: str, what: str, path: str, key: str) -> None:
    if plan.strict_paths:
        raise SmokeRefused(
            component,
            f"the {what} path {path} does not exist on this machine (--strict-paths: a "
            "path of another machine is refused, not substituted)",
            key,
        )


def looks_local(name: str) -> bool:
    """A name that can only mean a path: absolute, ./ ../ ~, a data file suffix, or more than one slash."""
    return (
        name.startswith(("/", "./", "../", "~"))
        or Path(name).suffix in (".jsonl", ".json", ".csv", ".parquet")
        or name.count("/") > 1
    )


def config_line(path: str, key: str | None, needle: str | None = None) -> dict | None:
    """{"line": N, "text": ...} of the first line that sets `key` (or, with `needle`, mentions it after `key`)."""
    if not key:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
    for number, line in enumerate(lines, 1):
        if pattern.match(line):
            if needle is None:
                return {"line": number, "text": line.strip()}
            for later in range(number - 1, min(len(lines), number + 40)):
                if needle in lines[later]:
                    return {"line": later + 1, "text": lines[later].strip()}
            return {"line": number, "text": line.strip()}
    return None
