"""Hover and completion content, from the models' own field facts, the migration table and the check's plan."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from grpo_schema.engine.batch_geometry import Geometry, problems
from grpo_schema.engine.check import BATCH_INPUTS, TRL_REWARD_FUNCS, CheckResult
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.diagnostics import yaml_value
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.migrations import MIGRATIONS, describe
from grpo_schema.engine.release import batch_meaning, release_surface
from grpo_schema.engine.release_choices import accepted_values
from grpo_schema.engine.release_texts import for_release, status

if TYPE_CHECKING:
    from grpo_schema.versions import FieldInfo, ReleaseSurface

_KEY_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w.\-]*)\s*:")
SCHEDULE = (
    ("generation batch", "generation_batch_size"),
    ("prompts per generation", "prompts_per_generation"),
    ("steps per generation", "steps_per_generation"),
    ("optimizer steps per generation", "optimizer_steps_per_generation"),
)


@functools.lru_cache(maxsize=1)
def descriptions() -> dict[str, str]:
    """Field -> its description (the Pydantic models; imported on the first hover, not at start-up)."""
    from grpo_schema.api.config import GRPORunConfig

    return {name: info.description or "" for name, info in GRPORunConfig.model_fields.items()}


def _profile_descriptions(profiles: tuple[Any, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for profile in profiles:
        model = profile.script_args
        if isinstance(model, str):
            import importlib

            module, name = model.split(":")
            model = getattr(importlib.import_module(module), name)
        for name, info in getattr(model, "model_fields", {}).items():
            out[name] = f"({profile.name} script argument) {info.description or ''}".strip()
    return out


def key_at(line: str, character: int) -> str | None:
    """The top-level key written on this line, when the cursor is on it."""
    match = _KEY_LINE.match(line)
    if not match or match["indent"] or character > match.end("key"):
        return None
    return match["key"]


def history(key: str) -> str:
    """TRL's (and transformers') name history of a key, from the migration table."""
    if key in MIGRATIONS:
        migration = MIGRATIONS[key]
        return f"{describe(migration)}. {migration.note}".strip()
    renamed_from = [m for m in MIGRATIONS.values() if m.kind == "renamed" and m.replacement == key]
    return "; ".join(f"renamed from `{m.key}` in {m.origin} {m.since}" for m in renamed_from)


def judged_as(result: CheckResult | None) -> ReleaseSurface | None:
    """The table of the release the file was judged for (None: TRL 1.16, the engine's own)."""
    return release_surface(result.trl_version) if result is not None else None


_EXPECTS = {
    "bool": "true or false",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "list": "a list",
    "dict": "a mapping",
}


def _release_facts(name: str, info: FieldInfo, release: ReleaseSurface) -> tuple[str, str, list[str]]:
    """(default, what it expects, its choices) as the release reads the key."""
    choices = [str(c) for c in (accepted_values(name, release) or info.choices or ())]  # what its check accepts
    if info.required:
        default = "none: the parser requires it"
    elif info.default_expr is not None or info.post_init is not None:
        default = "set when the config is built"
    else:
        default = f"`{yaml_value(info.default)}`"
    expects = ("one of " + ", ".join(choices)) if choices else _EXPECTS.get(info.type, "a value")
    return default, expects + (" or null" if info.nullable else ""), choices


def release_hover(key: str, release: ReleaseSurface, result: CheckResult | None, world_size_from: str) -> str:
    """The hover for a file judged for an older release: its default, choices and status, and 1.16's description
    as it holds there."""
    info = release.fields.get(key)
    parts = [f"**{key}** (TRL {release.release})"]
    if info is not None:
        said = for_release(descriptions().get(key, ""), key, release, f"Read by TRL {release.release} ({info.source}).")
        default, expects, _ = _release_facts(key, info, release)
        parts += [said or f"Read by TRL {release.release} ({info.source}).", f"Default: {default} · expects {expects}"]
    parts.append(f"Status: {status(key, release)}")
    if info is not None and (key in BATCH_INPUTS or key == "num_processes"):
        parts.append(schedule_text(result, world_size_from))
    return "\n\n".join(parts)


def hover_text(
    key: str, result: CheckResult | None, profiles: tuple[Any, ...] = (), world_size_from: str = ""
) -> str | None:
    release = judged_as(result)
    if release is not None and (key in release.fields or key in compiled("config").fields):
        return release_hover(key, release, result, world_size_from)
    fields = compiled("config").fields
    launch = compiled("launch").fields
    facts = fields.get(key) or launch.get(key)
    text = descriptions().get(key) or _profile_descriptions(profiles).get(key, "")
    past = history(key)
    if facts is None and not text and not past:
        return None
    parts = [f"**{key}**" + (" (an `accelerate launch` option)" if key in launch else "")]
    if text:
        parts.append(text)
    if facts is not None:
        parts.append(f"Default: `{yaml_value(facts['default'])}` · expects {facts['expected']}")
    if past:
        parts.append(f"History: {past}")
    if key in BATCH_INPUTS or key == "num_processes":
        parts.append(schedule_text(result, world_size_from))
    return "\n\n".join(parts)


def schedule_text(result: CheckResult | None, world_size_from: str = "") -> str:
    """The derived schedule at the declared world size, or why TRL would refuse the geometry there."""
    if result is None or result.config is None:
        return "Schedule: not available until the file loads."
    world = result.world_size
    if result.sources.get("world_size") == "file":
        source = "num_processes in the file"
    else:
        source = world_size_from or "not declared; write `# grpo: --world-size N`"
    head = f"**Schedule at world size {world}** ({source})"
    plan = result.plan
    if plan is None:
        config = result.migrated or result.config
        found = problems(Geometry.of(config, batch_meaning(result.trl_version)), world)
        reasons = "; ".join(_problem(p, config) for p in found) or "a batch input is invalid"
        return f"{head}: none, TRL would refuse this geometry: {reasons}."
    rows = [f"| {label} | {_number(getattr(plan, name))} | {plan.formulas.get(name, '')} |" for label, name in SCHEDULE]
    return "\n".join([head, "", "| | value | how |", "| --- | --- | --- |", *rows])


def _problem(problem: Any, config: Any) -> str:
    if problem.kind == "partial_groups":
        return (
            f"the generation batch {problem.generation_batch_size} is not a multiple of num_generations "
            f"{config.num_generations}"
        )
    if problem.kind == "not_per_device_multiple":
        return (
            f"generation_batch_size {problem.generation_batch_size} is not a multiple of "
            f"per_device_train_batch_size x world size"
        )
    if problem.kind == "both_set":
        return "generation_batch_size and steps_per_generation are both set"
    return f"the eval batch {problem.generation_batch_size} does not hold whole groups"


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def completions(
    text: str, line: int, character: int, profiles: tuple[Any, ...], release: ReleaseSurface | None = None
) -> list[lsp.CompletionItem]:
    """Keys not yet written, a key's values, reward names; the release's keys, defaults and values when the file
    is judged for an older release."""
    lines = split_lines(text)
    current = lines[line] if line < len(lines) else ""
    before = current[:character]
    match = _KEY_LINE.match(before)
    if match and not match["indent"]:
        return _values(match["key"], before[match.end() :], profiles, release)
    if before.lstrip().startswith("-") and _list_owner(lines, line) == "reward_funcs":
        return _reward_items(profiles, release)
    if before.strip() and not re.fullmatch(r"[A-Za-z_][\w.\-]*", before):
        return []
    if before != before.lstrip():  # nested: keys of a mapping value are not offered here
        return []
    return _keys(profiles, written=_written(lines), release=release)


def _written(lines: list[str]) -> set[str]:
    return {m["key"] for m in map(_KEY_LINE.match, lines) if m and not m["indent"]}


def _list_owner(lines: list[str], line: int) -> str | None:
    for index in range(line - 1, -1, -1):
        match = _KEY_LINE.match(lines[index])
        if match and not match["indent"]:
            return match["key"]
    return None


def _key_items(written: set[str], release: ReleaseSurface | None) -> list[lsp.CompletionItem]:
    docs = descriptions()
    found: list[tuple[str, str, str]] = []  # (key, default, documentation)
    if release is None:
        found = [(n, yaml_value(f["default"]), docs.get(n, "")) for n, f in compiled("config").fields.items()]
    else:
        for name, info in release.fields.items():
            fallback = f"Read by TRL {release.release} ({info.source})."
            found.append(
                (
                    name,
                    _release_facts(name, info, release)[0].strip("`"),
                    for_release(docs.get(name, ""), name, release, fallback) or fallback,
                )
            )
    return [
        lsp.CompletionItem(
            label=name,
            kind=lsp.CompletionItemKind.Property,
            detail=f"default {default}",
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=doc),
            insert_text=f"{name}: ",
            sort_text=("0" if name in BATCH_INPUTS else "1") + name,
        )
        for name, default, doc in found
        if name not in written
    ]


def _keys(
    profiles: tuple[Any, ...], written: set[str], release: ReleaseSurface | None = None
) -> list[lsp.CompletionItem]:
    items = _key_items(written, release)
    extra = _profile_descriptions(profiles)
    for profile in profiles:
        for name, facts in profile.validator.fields.items():
            if name not in written and name not in compiled("config").fields:
                items.append(
                    lsp.CompletionItem(
                        label=name,
                        kind=lsp.CompletionItemKind.Property,
                        detail=f"{profile.name}; default {yaml_value(facts['default'])}",
                        documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=extra.get(name, "")),
                        insert_text=f"{name}: ",
                        sort_text="2" + name,
                    )
                )
    return items


def _reward_names(profiles: tuple[Any, ...], release: ReleaseSurface | None = None) -> list[str]:
    """The names the script resolves: the judged release's `trl grpo` registry (none before 0.18, think_format_reward
    alone up to 0.21), or the profiles' own registries."""
    replacing = any(p.replaces_builtin_rewards for p in profiles)
    builtins = list(release.reward_funcs) if release is not None else list(TRL_REWARD_FUNCS)
    names = [] if replacing else builtins
    for profile in profiles:
        names += [n for n in profile.reward_funcs if n not in names]
    return names


def _reward_items(profiles: tuple[Any, ...], release: ReleaseSurface | None = None) -> list[lsp.CompletionItem]:
    source = ", ".join(p.name for p in profiles) or (f"TRL {release.release}" if release is not None else "TRL")
    return [
        lsp.CompletionItem(label=name, kind=lsp.CompletionItemKind.Function, detail=f"reward of {source}")
        for name in _reward_names(profiles, release)
    ]


def _values(
    key: str, typed: str, profiles: tuple[Any, ...], release: ReleaseSurface | None = None
) -> list[lsp.CompletionItem]:
    if key == "reward_funcs":
        return _reward_items(profiles, release)
    if release is not None and key in release.fields:
        info = release.fields[key]
        default, _, choices = _release_facts(key, info, release)
        choices += ["true", "false"] if info.type == "bool" else []
        return [
            lsp.CompletionItem(
                label=c,
                kind=lsp.CompletionItemKind.EnumMember,
                detail="default" if f"`{c}`" == default else None,
                preselect=f"`{c}`" == default,
            )
            for c in choices
        ]
    facts = compiled("config").fields.get(key)
    if facts is None:
        for profile in profiles:
            facts = profile.validator.fields.get(key) or facts
    if facts is None:
        return []
    choices = [str(c) for c in facts["choices"]]
    if "true or false" in facts["expected"]:
        choices += ["true", "false"]
    default = yaml_value(facts["default"])
    return [
        lsp.CompletionItem(
            label=choice,
            kind=lsp.CompletionItemKind.EnumMember,
            detail="default" if choice == default else None,
            preselect=choice == default,
        )
        for choice in choices
    ]
