"""The committed per-release tables (releases/*.json) as Python objects, and version parsing.

Pure Python: reads JSON written by scripts/trl_releases.py; never imports torch, transformers or trl.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Union

RELEASES_DIR = Path(__file__).resolve().parent / "releases"
MINIMUM = (0, 14, 0)  # GRPOTrainer and `trl grpo` appeared in TRL 0.14.0

Version = tuple[int, int, int]
VersionLike = Union[str, tuple[int, ...]]

_VERSION = re.compile(
    r"^\s*v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?"
    r"(?:[.\-_]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)[.\-_]?\d*)*(?:\+[0-9A-Za-z.]+)?\s*$",
    re.IGNORECASE,
)


class VersionError(ValueError):
    """A TRL version that is not parseable, or older than any release with `trl grpo`."""


class NewerThanTablesWarning(UserWarning):
    """A TRL version newer than the newest committed table: the newest table is used."""


def _fmt(v: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in v)


def supported_range() -> str:
    """'supported releases are 0.14.0 to 1.16.0': every message about a version that cannot be judged says it."""
    return f"supported releases are {_fmt(MINIMUM)} to {newest()}"


def _parse(text: VersionLike) -> Version:
    if isinstance(text, tuple):
        if not 2 <= len(text) <= 3 or not all(isinstance(p, int) and p >= 0 for p in text):
            raise VersionError(f"not a TRL version: {text!r} (expected a tuple like (0, 19, 1); {supported_range()})")
        return (text[0], text[1], text[2] if len(text) == 3 else 0)
    if not isinstance(text, str):
        raise VersionError(f"not a TRL version: {text!r} ({supported_range()})")
    m = _VERSION.match(text)
    if m is None:
        raise VersionError(
            f"not a TRL version: {text!r} (expected MAJOR.MINOR[.PATCH], e.g. 0.19.1 or 1.16; {supported_range()})"
        )
    return (int(m["major"]), int(m["minor"]), int(m["patch"] or 0))


def parse_version(text: VersionLike) -> Version:
    """'0.19.1' / 'v0.19' / '1.16.0rc1' -> (major, minor, patch).

    Raises VersionError when the text is not a version or names a release older than TRL 0.14.0 (no `trl grpo`).
    A version newer than the newest table parses, with a NewerThanTablesWarning: the newest table stands in for it.
    """
    v = _parse(text)
    if v < MINIMUM:
        raise VersionError(
            f"TRL {_fmt(v)} has no GRPOTrainer / `trl grpo`: {supported_range()} (GRPO appeared in TRL 0.14.0)"
        )
    if v[:2] > parse_release(newest())[:2]:
        warnings.warn(
            f"TRL {_fmt(v)} is newer than the newest table ({newest()}); judging it as {newest()}",
            NewerThanTablesWarning,
            stacklevel=2,
        )
    return v


def parse_release(text: str) -> Version:
    return _parse(text)


@dataclass(frozen=True)
class FieldInfo:
    """One key `trl grpo --config` reads in a release."""

    name: str
    type: str  # bool | int | float | str | list | dict | union | any | object
    default: Any = None  # the dataclass default (None also when `required` or `default_expr`)
    source: str = ""  # GRPOConfig | TrainingArguments | ModelConfig | ScriptArguments | DatasetMixtureConfig
    nullable: bool = False
    choices: tuple[Any, ...] | None = None  # Literal / enum values / metadata choices (never checked at parse time)
    enum: str | None = None  # the Enum class the values come from (converted, so refused, when the dataclass is built)
    required: bool = False  # no default: the parser insists on it
    annotation: str = ""
    items: str | None = None  # element type of a list
    types: tuple[str, ...] | None = None  # members of a union
    default_expr: str | None = None  # a default computed by an expression the tables cannot evaluate
    default_when: tuple[tuple[str, Any], ...] = ()  # (condition, value): the default set again under a condition
    post_init: str | None = None  # the value __post_init__ assigns (the real default when `default` is None)
    overrides: str | None = None  # GRPOConfig redefines this TrainingArguments field
    base_default: Any = None  # ... whose default there was this

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> FieldInfo:
        return cls(
            name=name,
            type=data["type"],
            default=data.get("default"),
            source=data.get("source", ""),
            nullable=bool(data.get("nullable", False)),
            choices=tuple(data["choices"]) if "choices" in data else None,
            enum=data.get("enum"),
            required=bool(data.get("required", False)),
            annotation=data.get("annotation", ""),
            items=data.get("items"),
            types=tuple(data["types"]) if "types" in data else None,
            default_expr=data.get("default_expr"),
            default_when=tuple((c, v) for c, v in data.get("default_when", ())),
            post_init=data.get("post_init"),
            overrides=data.get("overrides"),
            base_default=data.get("base_default"),
        )


@dataclass(frozen=True)
class FrontEnd:
    """What a release's `trl grpo --config run.yaml` does before training starts."""

    reads_config: bool  # False (0.14-0.17): the front end parses argv itself and refuses `--config`
    unknown_keys: str  # no_config | ignored | error | accelerate
    script_unknown_keys: str  # what scripts/grpo.py alone does with them: ignored | error
    unknown_keys_message: str
    batch_divisibility_at_parse: bool  # GRPOConfig.__post_init__ raises on generation-batch divisibility
    dataclasses: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FrontEnd:
        return cls(
            reads_config=data["reads_config"],
            unknown_keys=data["unknown_keys"],
            script_unknown_keys=data["script_unknown_keys"],
            unknown_keys_message=data["unknown_keys_message"],
            batch_divisibility_at_parse=data["batch_divisibility_at_parse"],
            dataclasses=tuple(data["dataclasses"]),
        )


@dataclass(frozen=True)
class BatchCheck:
    """One divisibility by num_generations the release makes: the product of fields it checks, and where."""

    product: tuple[str, ...]  # e.g. ('per_device_train_batch_size', 'world_size', 'gradient_accumulation_steps')
    where: str  # 'trainer' (GRPOTrainer.__init__, when the run starts) | 'config' (GRPOConfig.__post_init__, parsing)
    eval: bool = False  # the evaluation batch's check (made when evaluation is on)


@dataclass(frozen=True)
class BatchMeaning:
    """What per_device_train_batch_size counts in a release, and its batch checks (trainer.json's `batch`)."""

    unit: str = "completions"  # 'prompts' (0.14: each row is a prompt, num_generations completions each)
    checks: tuple[BatchCheck, ...] = (
        BatchCheck(("generation_batch_size",), "config"),
        BatchCheck(("per_device_eval_batch_size", "world_size"), "config", True),
    )

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> BatchMeaning:
        if data is None:
            return cls()
        return cls(
            data["unit"], tuple(BatchCheck(tuple(c["product"]), c["where"], bool(c["eval"])) for c in data["checks"])
        )

    @property
    def train_check(self) -> BatchCheck | None:
        return next((c for c in self.checks if not c.eval), None)

    @property
    def eval_check(self) -> BatchCheck | None:
        return next((c for c in self.checks if c.eval), None)


@dataclass(frozen=True)
class ReleaseSurface:
    """Every key one TRL release's `trl grpo` parser reads, with its type and default."""

    release: str  # the release the table was read from (the last patch of its minor)
    releases: tuple[str, ...]  # every release this table stands for (identical surfaces share a table)
    transformers: str  # the transformers release its TrainingArguments came from
    fields: Mapping[str, FieldInfo] = field(repr=False)
    front_end: FrontEnd = field(repr=False)
    # The string values the release's trainer accepts for each choice-like field (loss_type, scale_rewards, ...),
    # read from its grpo_trainer.py / grpo_config.py (trainer.json); a field not named here has no such check.
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    # The keys the release warns are deprecated when set (its GRPOConfig, trainer or TrainingArguments), each with
    # the key it says to use instead, None where it names none this release reads (trainer.json).
    deprecations: Mapping[str, str | None] = field(default_factory=dict, repr=False)
    # The deprecated keys the release parses and then never uses (0.16-0.17's vllm_device and the other vllm_* of
    # the in-trainer engine, 0.26-0.27's max_prompt_length): setting one has no effect beyond the warning.
    unused: frozenset[str] = field(default_factory=frozenset, repr=False)
    # The reward names the release's `trl grpo` script resolves without an import, in its order (trainer.json):
    # think_format_reward alone from 0.18 to 0.21; none before 0.18, whose script took only a reward model.
    reward_funcs: tuple[str, ...] = field(default=(), repr=False)
    # What per_device_train_batch_size counts and the batch checks the release makes (trainer.json).
    batch: BatchMeaning = field(default_factory=BatchMeaning, repr=False)

    @property
    def version(self) -> Version:
        return parse_release(self.release)

    def __contains__(self, key: object) -> bool:
        return key in self.fields

    def unknown(self, keys: Any) -> list[str]:
        """The keys (of a config mapping, in order) this release's parser has no field for."""
        return [k for k in keys if k not in self.fields]

    def defaults(self) -> dict[str, Any]:
        return {n: f.default for n, f in self.fields.items() if not f.required}


@lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    with open(RELEASES_DIR / "index.json", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def releases() -> list[str]:
    """Every TRL release the tables cover (the last patch of each minor since 0.14), oldest first."""
    return [r["release"] for r in _index()["releases"]]


def newest() -> str:
    return releases()[-1]


@lru_cache(maxsize=None)
def _load(file: str) -> ReleaseSurface:
    with open(RELEASES_DIR / file, encoding="utf-8") as fh:
        data = json.load(fh)
    sharing = tuple(r["release"] for r in _index()["releases"] if r["file"] == file)
    trainer = _trainer()["releases"].get(data["release"], {})  # the table's own release stands for those sharing it
    return ReleaseSurface(
        release=data["release"],
        releases=sharing,
        transformers=data["transformers"],
        fields={n: FieldInfo.from_json(n, d) for n, d in sorted(data["fields"].items())},
        front_end=FrontEnd.from_json(data["front_end"]),
        choices={n: tuple(v) for n, v in trainer.get("choices", {}).items()},
        deprecations={n: d["use"] for n, d in trainer.get("deprecations", {}).items()},
        unused=frozenset(n for n, d in trainer.get("deprecations", {}).items() if d.get("unused")),
        reward_funcs=tuple(trainer.get("reward_funcs", ())),
        batch=BatchMeaning.from_json(trainer.get("batch")),
    )


@lru_cache(maxsize=1)
def _trainer() -> dict[str, Any]:
    """trainer.json: what each release's trainer accepts after parsing (releases sharing a table agree; a test checks)."""
    with open(RELEASES_DIR / "trainer.json", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _entry_for(v: Version) -> dict[str, Any]:
    entries = _index()["releases"]
    same_minor = [e for e in entries if parse_release(e["release"])[:2] == v[:2]]
    if same_minor:  # patches of one minor share its table (the tables are read from the last patch)
        return dict(same_minor[-1])
    below = [e for e in entries if parse_release(e["release"]) <= v]
    return dict(below[-1] if below else entries[0])


def surface(version: VersionLike) -> ReleaseSurface:
    """The table for a TRL release: its minor's table, else the nearest release below it (the newest table for a
    release newer than all, with a NewerThanTablesWarning). Raises VersionError for text that is not a version
    or a release older than 0.14."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NewerThanTablesWarning)
        v = parse_version(version)
    if v[:2] > parse_release(newest())[:2]:
        warnings.warn(
            f"TRL {_fmt(v)} is newer than the newest table ({newest()}); judging it as {newest()}",
            NewerThanTablesWarning,
            stacklevel=2,
        )
    return _load(_entry_for(v)["file"])
