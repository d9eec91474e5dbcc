"""check_text / check_file / check_mapping: YAML or a mapping -> every diagnostic at once, plus the plan.

The pipeline: load (positions kept) -> merge command-line overrides (check_input) -> sort keys (fields, profile
keys, launch keys, migrations, unknown: keys) -> field validation (failed fields fall back to defaults:
check_typing) -> the batch plan at the declared world size (plan) -> cross-field rules whose inputs are valid
(rules) -> the env section (env) -> positions and order (placing).
Nothing here raises on bad input, and nothing looks at the local machine. Fixes for a broken batch geometry
are searched for above this module (grpo_schema.engine.validate): the search re-runs this check on each edit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from grpo_schema.engine import codes
from grpo_schema.engine.check_input import Override, apply_overrides, not_a_mapping, pasted_annotations
from grpo_schema.engine.check_typing import launch_of, typed_config, validate_fields, validate_profiles
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.diagnostics import Diagnostic, has_errors
from grpo_schema.engine.env import check_env
from grpo_schema.engine.keys import SortedKeys, set_aside_unknown, sort_keys
from grpo_schema.engine.loader import load_yaml, value_problem
from grpo_schema.engine.placing import MAX_TEXT as MAX_TEXT  # kept here for the modules that import it here
from grpo_schema.engine.placing import bounded as bounded  # (the dialects, the service, the runtime, doctor)
from grpo_schema.engine.placing import finish, place
from grpo_schema.engine.placing import path_of as path_of
from grpo_schema.engine.plan import RunPlan, derive_plan
from grpo_schema.engine.positions import Positions
from grpo_schema.engine.profiles import Profile, get_profile
from grpo_schema.engine.recognise import not_a_grpo_config, other_kind, other_kind_of_keys
from grpo_schema.engine.release import release_surface
from grpo_schema.engine.release_reading import Reading, as_release_reads, read_as
from grpo_schema.engine.rules import RuleContext, run_rules
from grpo_schema.engine.view import ConfigView

if TYPE_CHECKING:
    from grpo_schema.engine.infile import FileSettings
    from grpo_schema.versions import ReleaseSurface

DEFAULT_TRL = "1.16.0"
_finish = finish  # the name the dialects, the service and doctor import

BATCH_INPUTS = frozenset(
    {
        "per_device_train_batch_size",
        "num_generations",
        "gradient_accumulation_steps",
        "generation_batch_size",
        "steps_per_generation",
        "num_iterations",
    }
)
TRL_REWARD_FUNCS = (
    "accuracy_reward",
    "reasoning_accuracy_reward",
    "think_format_reward",
    "get_soft_overlong_punishment",
)


@dataclass
class CheckResult:
    path: str
    world_size: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    config: ConfigView | None = None
    # The config as it will be once its renamed and removed keys are migrated (what the cross-field rules judge);
    # the same object as `config` when nothing needs migrating.
    migrated: ConfigView | None = None
    plan: RunPlan | None = None
    env: dict[str, str] = field(default_factory=dict)
    launch: dict[str, Any] = field(default_factory=dict)
    profile_args: dict[str, ConfigView] = field(default_factory=dict)
    # The mapping as loaded (after overrides), and where each key came from.
    raw: dict[str, Any] = field(default_factory=dict)
    positions: Positions = field(default_factory=Positions)
    # Where each set value came from: key (TRL name, or "world_size") -> "file" | "command line"; the world size
    # also "comment" (a `# grpo: --world-size N` comment) or "editor settings" (the language server's default).
    sources: dict[str, str] = field(default_factory=dict)
    # The TRL release the config was judged against, and where that came from (flag, installed, requirements,
    # default: grpo_schema.versions.default_version).
    trl_version: str = DEFAULT_TRL
    trl_version_source: str = "default"
    # With a memory fit (--hardware): its summary lines, the same text grpo validate prints and the form shows
    # (grpo_schema.commands.plan_render.memory_lines).
    memory_lines: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not has_errors(self.diagnostics)

    @property
    def derived(self) -> dict[str, Any]:
        if self.plan is None:
            return {"world_size": self.world_size}
        return self.plan.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "valid": self.valid,
            "world_size": self.world_size,
            "trl_version": self.trl_version,
            "trl_version_source": self.trl_version_source,
            "world_size_source": self.sources.get("world_size", "default"),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "derived": self.derived,
            **({"memory_lines": list(self.memory_lines)} if self.memory_lines else {}),
        }


def resolve_profiles(names: Iterable[str | Profile], allow_import: bool = False) -> tuple[Profile, ...]:
    if not names:  # the usual check: no profile
        return ()
    return tuple(p if isinstance(p, Profile) else get_profile(p, allow_import=allow_import) for p in names)


def check_file(path: str | Path, **options: Any) -> CheckResult:
    """Validate a YAML or JSON file. Raises OSError when the file cannot be read."""
    data = Path(path).read_bytes()
    return check_text(data, path=str(path), **options)


def check_text(text: str | bytes, path: str = "<string>", **options: Any) -> CheckResult:
    """Check YAML text at the world size and with the profiles its `# grpo:` comment declares, unless the
    options name them (grpo_schema.engine.infile: the one place every surface reads a file's settings)."""
    options, problems = file_options(text, options)
    return check_text_as(text, path, problems, **options)


def file_options(
    text: str | bytes, options: dict[str, Any], settings: FileSettings | None = None
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """check_text's options with the file's `# grpo:` settings under the explicit ones, and what of the comment
    could not be used (GRPO-Y015). A comment names registered profiles only: it never imports a module."""
    has_comment = b"grpo:" in text if isinstance(text, bytes) else "grpo:" in text
    if settings is None and not has_comment:
        return dict(options), []  # no comment (most files): the comment reader is not even loaded
    from grpo_schema.engine.infile import OPTIONS_HELP, read_file_settings, with_file_settings

    settings = read_file_settings(text) if settings is None else settings
    out = with_file_settings(settings, options)
    problems = [
        Diagnostic(codes.Y_COMMENT, "warning", p.message, line=p.line, column=1, hint=OPTIONS_HELP)
        for p in settings.problems
    ]
    if out.pop("profiles_from_comment", False):
        found = []
        for name in out["profiles"]:
            try:
                found.append(get_profile(name, allow_import=False))
            except (KeyError, ValueError, ImportError, AttributeError):
                from grpo_schema.engine.profiles import known_profiles

                problems.append(
                    Diagnostic(
                        codes.Y_COMMENT,
                        "warning",
                        f"`# grpo:` comment: unknown profile {name!r}",
                        line=settings.profiles_line,
                        column=1,
                        hint=f"known profiles: {', '.join(sorted(known_profiles()))}",
                    )
                )
        out["profiles"] = tuple(found)
    return out, problems


def check_text_as(text: str | bytes, path: str, problems: Sequence[Diagnostic] = (), **options: Any) -> CheckResult:
    """check_text with its options already resolved (file_options), plus the comment's problems. A file recognised
    as another kind (an accelerate config, an SFT recipe, a workflow: grpo_schema.engine.recognise) gets one note."""
    skipped = other_kind(text)
    if skipped is not None:
        return finish(_unread(path, [not_a_grpo_config(skipped)], options))
    loaded = load_yaml(text)
    if not loaded.ok:
        failed = _unread(path, list(problems) + loaded.diagnostics, options)
        if options.get("world_size"):
            failed.sources["world_size"] = options.get("world_size_source") or "command line"
        return finish(failed)
    return _check(loaded.data, path, loaded.positions, list(problems) + list(loaded.diagnostics), **options)


def _unread(path: str, diagnostics: list[Diagnostic], options: dict[str, Any]) -> CheckResult:
    return CheckResult(
        path,
        options.get("world_size") or 1,
        diagnostics=diagnostics,
        trl_version=options.get("trl_version") or DEFAULT_TRL,
        trl_version_source=options.get("trl_version_source") or "default",
    )


def check_mapping(mapping: Any, path: str = "<mapping>", **options: Any) -> CheckResult:
    # The bounds the YAML loader enforces, for mappings that never went through it: a 10,000-deep list raised
    # RecursionError (in repr), a non-string top-level key AttributeError.
    refused = value_problem(mapping)
    if refused is not None:
        return finish(_unread(path, [refused], options))
    skipped = other_kind_of_keys(mapping) if isinstance(mapping, dict) else None
    if skipped is not None:
        return finish(_unread(path, [not_a_grpo_config(skipped)], options))
    return _check(mapping, path, Positions(), [], **options)


def check_read(
    data: dict[str, Any],
    path: str,
    positions: Positions,
    diagnostics: Sequence[Diagnostic] = (),
    *,
    unknown: Iterable[str] = (),
    **options: Any,
) -> CheckResult:
    """The check of a config another reader produced (a GRPOConfig(...) call in Python: grpo_schema.dialects), with
    the key positions it kept. `unknown` names keys that are set to values only known at run time: they count as
    set, are never validated or replaced by a default, and every rule that reads one is skipped, as for a key
    that failed validation (the reader says so at the key)."""
    return _check(data, path, positions, list(diagnostics), unknown=frozenset(unknown), **options)


def _check(
    data: Any,
    path: str,
    positions: Positions,
    diagnostics: list[Diagnostic],
    *,
    unknown: frozenset[str] = frozenset(),
    world_size: int | None = None,
    profiles: Sequence[str | Profile] = (),
    overrides: Sequence[Override | str] | None = None,
    allow_env: Iterable[str] = (),
    allow_profile_import: bool = False,
    world_size_source: str | None = None,
    default_world_size: int | None = None,
    trl_version: str | None = None,
    trl_version_source: str | None = None,
) -> CheckResult:
    result = CheckResult(
        path,
        world_size or 1,
        diagnostics=diagnostics,
        positions=positions,
        trl_version=trl_version or DEFAULT_TRL,
        trl_version_source=trl_version_source or "default",
    )
    if data is None or not isinstance(data, dict):
        result.diagnostics.append(not_a_mapping(data))
        return finish(result)
    active = resolve_profiles(profiles, allow_import=allow_profile_import)
    mapping, origins = apply_overrides(dict(data), overrides or [])
    result.diagnostics += pasted_annotations(mapping)
    result.raw = mapping
    release = release_surface(trl_version)
    reading, keys = _read_keys(mapping, release, active)
    result.diagnostics += reading.diagnostics + keys.diagnostics
    unknown = set_aside_unknown(keys, unknown)
    config, failed, field_diags = typed_config(reading, keys)
    failed |= unknown
    result.launch, launch_diags = launch_of(keys.launch, reading.diagnostics)
    _record_sources(result, keys, origins, reading, release, world_size, world_size_source, default_world_size)
    profile_args, profile_diags = validate_profiles(active, keys.profile_args)
    result.config, result.profile_args = config, profile_args
    result.diagnostics += field_diags + launch_diags + profile_diags
    _plan_and_judge(result, config, failed, reading, keys, release, unknown, active)
    _judge_profiles_and_env(result, active, keys, allow_env)
    if release is not None:
        result.diagnostics = as_release_reads(result.diagnostics, release)
    place(result, keys.written_as, origins)
    return finish(result)


def _read_keys(
    mapping: dict[str, Any], release: ReleaseSurface | None, active: tuple[Profile, ...]
) -> tuple[Reading, SortedKeys]:
    """The mapping as the release reads it (in 1.16's terms), its keys sorted (fields, launch, profile, env)."""
    reading = (
        read_as(mapping, release, frozenset().union(*(p.keys | p.script_reads for p in active)))
        if release is not None
        else Reading(mapping)
    )
    keys = sort_keys(reading.mapping, active)
    keys.written_as.update(reading.written_as)
    return reading, keys


def _record_sources(
    result: CheckResult,
    keys: SortedKeys,
    origins: Any,
    reading: Reading,
    release: ReleaseSurface | None,
    world_size: int | None,
    world_size_source: str | None,
    default_world_size: int | None,
) -> None:
    """The world size the run has, and where it and every value came from (file, command line, a default)."""
    in_file = result.launch.get("num_processes") if isinstance(result.launch.get("num_processes"), int) else None
    declared = world_size or in_file
    result.world_size = declared or default_world_size or 1
    result.sources = {**dict.fromkeys(keys.fields, "file"), **dict.fromkeys(origins, "command line")}
    if declared:
        result.sources["world_size"] = (world_size_source or "command line") if world_size else "file"
    elif default_world_size:  # an editor's default: below everything the file or the command line says
        result.sources["world_size"] = "editor settings"
    for name in reading.implicit:
        result.sources[name] = f"the default of TRL {release.release if release else DEFAULT_TRL}"


def _judge_profiles_and_env(
    result: CheckResult, active: tuple[Profile, ...], keys: SortedKeys, allow_env: Iterable[str]
) -> None:
    """The active profiles' own checks, then the env: section's."""
    for profile in active:
        for profile_check in profile.checks:
            result.diagnostics += list(profile_check(result.config, result.profile_args[profile.name], result.raw))
    if keys.has_env:
        env = check_env(keys.env, frozenset(allow_env))
        result.env, result.diagnostics = env.values, result.diagnostics + env.diagnostics


def _plan_and_judge(
    result: CheckResult,
    config: ConfigView,
    failed: set[str],
    reading: Reading,
    keys: SortedKeys,
    release: ReleaseSurface | None,
    unknown: frozenset[str],
    active: tuple[Profile, ...],
) -> None:
    """The batch plan (when its inputs are valid), then the cross-field rules; result.migrated: what they judged."""
    if not failed & BATCH_INPUTS:
        result.plan = derive_plan(
            config, result.world_size, sources=result.sources, meaning=release.batch if release is not None else None
        )
    # The cross-field rules judge the config as it will be once its renamed and removed keys are migrated: a value
    # written under an old name still conflicts with the rest (TRL 1.16 ignores the old name, hence K002/K003).
    rule_config, rule_failed, rule_plan = config, failed | reading.refused, result.plan
    # Judged as an older release, the renamed keys left here are ones that release does not read either (those it
    # reads were read under their new names already): it ignores them, and so do the rules.
    if keys.renamed and release is None:
        rule_config, rule_failed, _ = validate_fields(
            compiled("config"), {**reading.implicit, **keys.renamed, **keys.fields}
        )
        rule_failed |= unknown
        rule_plan = (
            derive_plan(rule_config, result.world_size, sources=result.sources)
            if not rule_failed & BATCH_INPUTS
            else None
        )
    explicit = frozenset(keys.fields) | frozenset(keys.renamed) | unknown
    result.migrated = rule_config
    ctx = _rule_context(result, active, explicit - rule_failed, release)
    ctx.plan = rule_plan
    ctx.foreign_script = any(d.code in (codes.K_UNKNOWN, codes.K_PROFILE) for d in keys.diagnostics)
    ctx.foreign_profiles = tuple(keys.foreign_profiles)
    ctx.written = frozenset(result.raw)
    result.diagnostics += run_rules(rule_config, ctx, rule_failed)


def _rule_context(
    result: CheckResult, active: tuple[Profile, ...], explicit: frozenset[str], release: ReleaseSurface | None = None
) -> RuleContext:
    builtins = release.reward_funcs if release is not None else TRL_REWARD_FUNCS
    names, dotted, defaults, profile_names = _reward_registry(
        active, builtins, release.release if release is not None else None
    )
    return RuleContext(
        world_size=result.world_size,
        plan=result.plan,
        explicit=explicit,
        reward_names=names,
        allows_dotted_rewards=dotted,
        default_reward_funcs=defaults,
        profile_names=profile_names,
        launch=result.launch,
        trl_release=release.release if release is not None else None,
        batch=release.batch if release is not None else None,
        release_fields=frozenset(release.fields) if release is not None else None,
        release_choices=release.choices if release is not None else None,
    )


@functools.lru_cache(maxsize=64)
def _reward_registry(
    active: tuple[Profile, ...], builtins: tuple[str, ...] = TRL_REWARD_FUNCS, release: str | None = None
) -> tuple[frozenset[str], bool, tuple[str, ...] | None, tuple[str, ...]]:
    """What the active profiles (frozen, hashed by identity) make of reward names, the same at every check under
    them: the names the registry resolves (`builtins`: those of the judged release's `trl grpo` script, unless a
    profile replaces them), whether dotted paths are allowed, the default reward_funcs, and the profile names."""
    replacing = [p for p in active if p.replaces_builtin_rewards]
    names = set() if replacing else set(builtins)
    for profile in active:
        names |= set(profile.reward_funcs)
    defaults = next((p.default_rewards_at(release) for p in active if p.default_reward_funcs is not None), None)
    return (frozenset(names), all(p.allows_dotted_rewards for p in replacing), defaults, tuple(p.name for p in active))
