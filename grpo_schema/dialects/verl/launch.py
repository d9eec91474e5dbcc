"""verl launches in a shell script: `python3 -m verl.trainer.main_ppo a.b=c +x=y ...`, one Run per launch.

Each override keeps where it is written (line, column) and how its value was resolved. The values stay the text
Hydra will read (after the shell has removed its quotes); `hydra_value` reads them as Hydra's grammar does for
the plain values a batch check needs (numbers, booleans, null, words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.dialects.verl.shell import Command, Script, Word, read_script

# Entry points that take verl's trainer config: verl's own and the recipes' (`recipe.dapo.main_dapo`, a project's
# `verl_tool.trainer.main_ppo`); `main_ppo_v0` is verl's legacy path (checks inside Ray); `fully_async_main` is verl's
# fully async trainer, whose config extends ppo_trainer.
_ENTRY = re.compile(
    r"(?:[\w.]*\.)?(main_ppo(?:_v0)?|main_dapo|main_\w*ppo\w*|main_generation|fully_async_main)"
    r"(?:\.py)?$"
)
# the config an entry point composes unless --config-name says otherwise
DEFAULT_CONFIG = {"fully_async_main": "fully_async_ppo_trainer"}
_KEY = re.compile(r"(\+\+|\+|~)?([A-Za-z_][\w\-]*(?:\.[\w\-]+|\[\d+\])*)$")
UNKNOWN = object()  # the value of an override the script does not determine


@dataclass
class Setting:
    key: str  # dotted, without its prefix
    text: str | None  # the value as Hydra gets it; None when unknown
    line: int
    column: int
    op: str = ""  # "", "+", "++" or "~"
    notes: tuple[str, ...] = ()  # how variables resolved (defaults taken)
    why: str = ""  # why the value is unknown

    @property
    def known(self) -> bool:
        return self.text is not None

    @property
    def override(self) -> str:
        """The override as verl's command line gets it (only for known values)."""
        if self.op == "~":
            return f"~{self.key}" + (f"={self.text}" if self.text else "")
        return f"{self.op}{self.key}={self.text}"

    @property
    def value(self) -> Any:
        return hydra_value(self.text) if self.text is not None else UNKNOWN


@dataclass
class Run:
    """One launch: the entry point, the base config and the overrides in order."""

    entry: str
    line: int
    settings: list[Setting] = field(default_factory=list)
    config_name: str = "ppo_trainer"
    config_path: str | None = None
    passthrough: bool = False  # "$@": overrides from the script's own command line, not known
    unread: list[tuple[Word, str]] = field(default_factory=list)  # words that are not overrides, with why
    block: str = ""  # the branch or loop the launch sits in

    def last(self, key: str) -> Setting | None:
        found = [s for s in self.settings if s.key == key]
        return found[-1] if found else None


def hydra_value(text: str) -> Any:
    """A plain override value as Hydra reads it: int, float, bool, null or a string (lists stay text)."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if re.fullmatch(r"[+-]?\d+", stripped.replace("_", "")):
        return int(stripped.replace("_", ""))
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", lowered):
        return float(stripped)
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
        return stripped[1:-1]
    return stripped


def runs_in_script(text: str) -> tuple[list[Run], Script]:
    script = read_script(text)
    runs = [run for command in script.commands if (run := _run_of(command)) is not None]
    return runs, script


def _entry_index(words: list[Word]) -> tuple[int, str] | None:
    for index, word in enumerate(words):
        text = word.text or ""
        if text == "-m" and index + 1 < len(words) and _ENTRY.match(words[index + 1].text or ""):
            return index + 1, words[index + 1].text or ""
        if text.endswith(".py") and _ENTRY.match(text) and index and "python" in (words[index - 1].text or ""):
            return index, text
    return None


def _run_of(command: Command) -> Run | None:
    found = _entry_index(command.words)
    if found is None:
        return None
    index, entry = found
    run = Run(entry, command.line, block=command.block)
    run.config_name = entry_config(entry)
    words = command.words[index + 1 :]
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        if text is not None and text in ("--config-name", "--config-path", "-cn", "-cp") and i + 1 < len(words):
            _config_option(run, text, words[i + 1])
            i += 2
            continue
        if text is not None and re.match(r"\d*(>>?|<|&>)", text):  # a redirection, and its target
            i += 1 if re.match(r"\d*(>>?|<|&>)&?.", text) and not text.endswith("&") else 2
            continue
        split = word.split_key()
        if split is not None and split[0] in ("--config-name", "--config-path", "-cn", "-cp"):
            _config_option(run, split[0], split[1])
        elif word.parts and any(p.why.startswith("the script's own arguments") for p in word.parts):
            run.passthrough = True
        else:
            setting = _setting(word)
            if isinstance(setting, Setting):
                run.settings.append(setting)
            else:
                run.unread.append((word, setting))
        i += 1
    return run


def entry_config(entry: str) -> str:
    """The config an entry point composes unless --config-name says otherwise."""
    match = _ENTRY.match(entry)
    return DEFAULT_CONFIG.get(match.group(1), "ppo_trainer") if match else "ppo_trainer"


def _config_option(run: Run, option: str, word: Word) -> None:
    value = word.text
    if option in ("--config-name", "-cn"):
        run.config_name = value or "ppo_trainer"
    else:
        run.config_path = value if value is not None else f"a folder the script does not determine ({word.why})"


def _setting(word: Word) -> Setting | str:
    split = word.split_key()
    if split is None:
        written = word.text
        if written is not None and written.startswith("~") and _KEY.match(written):
            return Setting(written[1:], "", word.line, word.column, "~")
        if written is None:
            return f"the override is not known: {word.why}"
        return "not a `key=value` override"
    key, value = split
    match = _KEY.match(key)
    if not match:
        return f"{key!r} is not a config key"
    return Setting(
        match.group(2), value.text, word.line, word.column, match.group(1) or "", tuple(value.notes), value.why
    )
