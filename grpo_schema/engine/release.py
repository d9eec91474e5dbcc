"""Judging a config against the TRL release that will run it, not only against TRL 1.16.

The engine's tables are TRL 1.16's. For another release the config is first read as that release reads it
(grpo_schema.versions holds every release's keys, types and defaults, read from its own source), then handed to
the 1.16 checker in 1.16's terms:

* a key the release reads under an old name (torch_dtype in 0.19) is checked under its new name, at its line;
* a key only the release reads (max_prompt_length up to 0.27, vllm_device in 0.16) is type-checked as the release
  types it and leaves the rest alone: it is not an error for that release;
* a key the release does not read gets the diagnostic its own front end earns: `trl grpo` stops (0.19-0.21),
  ignores it (0.18, 0.22-0.28: a warning, the setting has no effect), or hands it to `accelerate launch`, which
  exits (0.29 on);
* the release's defaults stand for the keys the file leaves out (loss_type bnpo in 0.19, beta 0.04 in 0.16, vllm_mode
  server up to 0.29, ...), and what a release did before a key existed stands in for it (one generation per
  micro-step before steps_per_generation, the sequence-mean loss before loss_type), so the cross-field rules and the
  batch schedule are the release's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.diagnostics import Diagnostic, Fix, yaml_value
from grpo_schema.engine.keys import is_launch_key
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.release_choices import choice_refused, kept_for_release
from grpo_schema.engine.transformers_range import read_by_other_transformers

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

REFERENCE = "1.16"  # the release the engine's own tables describe

# What a release did before the key existed, where that differs from 1.16's default for it.
BEFORE_THE_KEY = {
    "loss_type": "grpo",  # the per-sequence mean of token losses, averaged over sequences (TRL < 0.17)
    "steps_per_generation": 1,  # each micro-step generated its own completions (TRL < 0.17; see before_the_key)
    "vllm_mode": "server",  # vLLM ran on a GPU of its own (vllm_device), outside the training processes
    "scale_rewards": True,  # rewards were always divided by the group's standard deviation
    # no correction for the vLLM sampler's mismatch (TRL < 0.23): on-policy, old log-probs were not computed
    "vllm_importance_sampling_correction": False,
}


def before_the_key(release: ReleaseSurface, mapping: dict[str, Any] | None = None) -> dict[str, Any]:
    """BEFORE_THE_KEY for one release and file. TRL 0.17 generated once per gradient_accumulation_steps micro-steps
    (its trainer checks per_device x processes x gradient_accumulation_steps, the batch it generates at once),
    which is 1.16's default when steps_per_generation is unset: no value stands in for the key there. TRL 0.16 with
    num_iterations > 1 generated at each micro-step of an optimizer step, kept those gradient_accumulation_steps
    micro-batches and trained on them again for the next num_iterations - 1 optimizer steps: the same schedule
    (what is trained on, when, with which weights) as steps_per_generation = gradient_accumulation_steps, 1.16's
    default, so no value stands in there either."""
    train = release.batch.train_check
    reused = (mapping or {}).get("num_iterations")
    reuses = isinstance(reused, int) and not isinstance(reused, bool) and reused > 1
    if train is not None and "gradient_accumulation_steps" in train.product or reuses:
        return {k: v for k, v in BEFORE_THE_KEY.items() if k != "steps_per_generation"}
    return BEFORE_THE_KEY


def batch_meaning(version: str | None) -> Any:
    """The judged release's BatchMeaning (what per_device_train_batch_size counts, its checks), None for 1.16."""
    release = release_surface(version)
    return release.batch if release is not None else None


def prompt_cap(version: str | None, raw: Any) -> tuple[int | None, str]:
    """The length the judged release cuts every prompt to, and where it comes from: max_prompt_length where the
    release uses it (up to 0.25; the file's value, else the release's default), None where it keeps whole prompts
    (0.26-0.27 parse the key and ignore it; 0.28 on do not read it) or the file sets it to null. A prompt longer than the cap is truncated to its last `cap` tokens before
    generation, so nothing longer reaches the model."""
    release = release_surface(version)
    if release is None or "max_prompt_length" not in release.fields:
        return None, ""
    if "max_prompt_length" in release.unused:
        return None, f"TRL {release.release} no longer truncates prompts (max_prompt_length is deprecated there)"
    written = raw.get("max_prompt_length", ...) if isinstance(raw, dict) else ...
    if written is None:
        return None, f"max_prompt_length: null (TRL {release.release} keeps whole prompts)"
    if isinstance(written, int) and not isinstance(written, bool) and written > 0:
        return written, f"file (max_prompt_length: TRL {release.release} truncates prompts to it)"
    default = release.fields["max_prompt_length"].default
    if isinstance(default, int) and not isinstance(default, bool) and default > 0:
        return default, f"TRL {release.release}'s default max_prompt_length (it truncates prompts to it)"
    return None, ""


# Keys the release does not read: unknown, a downstream script's, or renamed / removed before it. A front end that
# ignores keys it does not read makes each of these a warning (the setting has no effect), not an error.
IGNORED_WHEN_UNREAD = {codes.K_UNKNOWN, codes.K_PROFILE, codes.K_RENAMED, codes.K_REMOVED}
# Written out as 1.16 reads them (a boolean scale_rewards is the same setting as 'group' / 'none').
BOOLEAN_WORDS = {"true", "false", "yes", "no", "y", "n", "t", "f", "1", "0", "on", "off"}


@dataclass
class Reading:
    """A config as one release reads it, in the terms the 1.16 checker understands."""

    mapping: dict[str, Any]  # what the checker validates (translated keys, release-only keys removed)
    implicit: dict[str, Any] = field(default_factory=dict)  # the release's values for keys the file leaves out
    written_as: dict[str, str] = field(default_factory=dict)  # checked name -> key as written
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Keys whose value the release's trainer refuses: the rules about them stay silent (one finding per cause; the
    # rest is judged with the release's default, a value the user never wrote).
    refused: set[str] = field(default_factory=set)
    # Values the release accepts that 1.16's types cannot hold (optim: adamw_hf at 0.14): validated by the release's
    # value list, so the checker leaves them alone and the config holds them as written.
    kept: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=64)  # every request of the service names its release: look it up once
def release_surface(version: str | None) -> ReleaseSurface | None:
    """The table to judge by, or None when the engine's own 1.16 tables are the release's."""
    if version is None or version.removeprefix("v").split(".")[:2] == REFERENCE.split("."):
        return None  # the engine's own tables (and no need to load the others: `grpo validate` starts faster)
    from grpo_schema.versions import parse_version, surface

    table = surface(version)  # a release newer than every table is judged by the newest, 1.16
    if parse_version(table.release)[:2] == parse_version(REFERENCE)[:2]:
        return None
    judged = next((r for r in table.releases if parse_version(r)[:2] == parse_version(version)[:2]), table.release)
    # Releases with identical surfaces share one table (1.0-1.5 read 1.0.0's): the messages name the judged one.
    return table if judged == table.release else replace(table, release=judged)


def read_as(mapping: dict[str, Any], release: ReleaseSurface, profile_keys: frozenset[str]) -> Reading:
    fields_116 = compiled("config").fields
    reading = Reading({})
    launcher_reads = release.front_end.unknown_keys == "accelerate"
    for key, value in mapping.items():
        other = read_by_other_transformers(key, value, mapping, release)
        if other is not None:  # warmup_ratio in TRL 0.29, project in TRL 0.23: read by some transformers it accepts
            reading.diagnostics.append(other)
            problem = parser_refuses(key, value, release) if key in release.fields else None
            if problem is not None:  # read by the table's transformers: its parser converts the value
                reading.diagnostics.append(problem)
                continue
            if key in fields_116:
                reading.mapping[key] = value
            elif key in MIGRATIONS:  # checked under the name 1.16 reads, at its line
                for name, new_value in MIGRATIONS[key].rewrite(value, mapping).items():
                    if name in fields_116 and name not in mapping:
                        reading.mapping[name] = new_value
                        reading.written_as[name] = key
            continue
        if is_launch_key(key) and key not in release.fields and not launcher_reads:
            reading.diagnostics.append(launch_key_not_read(key, release))  # still the declared world size
        if key in ("env", "hardware") or key in profile_keys or key not in release.fields and key not in fields_116:
            reading.mapping[key] = value  # the checker's own reading (launch keys, typos, profile arguments)
            continue
        if key not in release.fields:
            reading.diagnostics.append(not_read(key, release))
            continue
        problem = parser_refuses(key, value, release)
        if problem is not None:
            reading.diagnostics.append(problem)
            continue
        # refused by the trainer when it starts (loss_type), or not among the release's own value list (an optim
        # of a later transformers, refused when TrainingArguments is built)
        refused = trainer_refuses(key, value, release) or choice_refused(key, value, release, key in fields_116)
        if refused is not None and refused.severity == "warning":
            reading.diagnostics.append(refused)  # the parser takes it: judged further as the release reads it
            refused = None
        if refused is not None:
            # one finding per cause: the checker judges the rest with the release's default, not this value (its
            # own choice check and the rules about the value would speak of it again)
            reading.diagnostics.append(refused)
            reading.refused.add(key)
            continue
        if key in fields_116:
            reading.mapping[key] = value
            if kept_for_release(key, value, release, fields_116[key]):
                reading.kept[key] = value
        elif key in MIGRATIONS:  # read under its old name: checked under the new one, where 1.16 reads it
            for name, new_value in MIGRATIONS[key].rewrite(value, mapping).items():
                if name in fields_116 and name not in mapping:
                    reading.mapping[name] = new_value
                    reading.written_as[name] = key
        # any other key only this release reads has been type-checked above; 1.16 has no rule about it
    reading.diagnostics += [
        required(name, release) for name, info in release.fields.items() if info.required and name not in mapping
    ]
    reading.diagnostics += deprecated_in_release(mapping, release)
    reading.implicit = release_defaults(
        release, {k: v for k, v in mapping.items() if k not in reading.refused}, fields_116
    )
    return reading


def required(name: str, release: ReleaseSurface) -> Diagnostic:
    """A key the release's parser insists on (dataset_name for TRL 0.14-0.17's script)."""
    return Diagnostic(
        codes.T_MISSING, "error", f"TRL {release.release}'s parser requires {name}", fields=(name,), hint=f"set {name}"
    )


def release_defaults(release: ReleaseSurface, mapping: dict[str, Any], fields_116: dict) -> dict[str, Any]:
    """The release's value for each 1.16 key the file leaves out, where it differs from 1.16's default."""
    implicit: dict[str, Any] = {}
    model = compiled("config")
    before = before_the_key(release, mapping)
    for name, facts in fields_116.items():
        if name in mapping:
            continue
        info = release.fields.get(name)
        if info is None:
            if name in before:
                implicit[name] = before[name]
            continue
        if info.required or info.default_expr is not None or info.post_init is not None:
            continue  # computed at run time: the tables cannot say
        try:
            mine, reference = (model.validate({name: v})[name] for v in (info.default, facts.get("default")))
        except Exception:  # a release default 1.16's types cannot hold: nothing to carry over
            continue
        if mine != reference and not (_off(mine) and _off(reference)):
            implicit[name] = info.default
    return implicit


def _off(value: Any) -> bool:
    """Values that all mean 'not set' or 'off' ('' and {} in an old release, None or 'no' in 1.16)."""
    return value is None or value is False or value in ("", "no", "none") or value == {} or value == []


def older_name(key: str, release: ReleaseSurface) -> str | None:
    """The name under which the release reads a setting TRL 1.16 calls `key` (torch_dtype for dtype in 0.19,
    gradient_checkpointing for activation_checkpointing), from the renames and 1.16's own deprecations."""
    olds = [m.key for m in MIGRATIONS.values() if m.kind == "renamed" and m.replacement == key]
    olds += [old for old, new in reference_deprecations().items() if new == key]
    return next((old for old in olds if old in release.fields), None)


def not_read(key: str, release: ReleaseSurface) -> Diagnostic:
    """A key TRL 1.16 reads but this release does not, as the release's front end treats it; renamed back where the
    release reads the setting under an older name (removing it would drop the setting)."""
    stops, how = front_end_verdict(release)
    severity = "error" if stops else "warning"
    back = older_name(key, release)
    if back is not None:
        return Diagnostic(
            codes.K_NOT_IN_RELEASE,
            severity,
            f"{key} is not read by TRL {release.release}, which reads the setting as {back}; {how}",
            fields=(key,),
            hint=f"write {back} for TRL {release.release}",
            fix=Fix(rename={key: back}, safe=True, title=f"rename {key} to {back}"),
        )
    message = f"{key} is not read by TRL {release.release} (it came in a later release); {how}"
    return Diagnostic(
        codes.K_NOT_IN_RELEASE,
        severity,
        message,
        fields=(key,),
        hint=f"remove {key}, or run a TRL release that reads it",
        fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
    )


def launch_key_not_read(key: str, release: ReleaseSurface) -> Diagnostic:
    """An `accelerate launch` key in a release whose `trl grpo` does not hand config keys to accelerate (< 0.29)."""
    stops, how = front_end_verdict(release)
    return Diagnostic(
        codes.K_LAUNCH_NOT_IN_RELEASE,
        "error" if stops else "warning",
        f"{key} is an `accelerate launch` option, which TRL {release.release}'s `trl grpo` does not take "
        f"from a config file; {how}",
        fields=(key,),
        hint=f"pass it to `accelerate launch` on the command line (--{key} ...), and remove it here",
        fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
    )


def front_end_verdict(release: ReleaseSurface) -> tuple[bool, str]:
    """(whether an unknown key stops the run, what the release does with it)."""
    front = release.front_end
    mode = front.unknown_keys if front.reads_config else f"script-{front.script_unknown_keys}"
    if mode == "error" or mode == "script-error":
        return True, f"its `trl grpo` parser stops: {front.unknown_keys_message}"
    if mode == "accelerate":
        return True, (
            "its `trl grpo` hands unknown keys to `accelerate launch`, which exits with 'unrecognized arguments'"
        )
    return False, "it ignores the key, so the setting has no effect"


def parser_refuses(key: str, value: Any, release: ReleaseSurface) -> Diagnostic | None:
    """A string the release's parser cannot convert to the field's type (it converts YAML strings with the field's
    type, as it converts command-line arguments): `scale_rewards: group` where scale_rewards is a boolean."""
    info = release.fields[key]
    if not isinstance(value, str) or info.type not in ("bool", "int", "float"):
        return None
    text = value.strip()
    if info.nullable and text.lower() in ("none", "null", ""):
        return None
    ok = text.lower() in BOOLEAN_WORDS if info.type == "bool" else _converts(text, int if info.type == "int" else float)
    if ok:
        return None
    kind = {"bool": "a boolean", "int": "an integer", "float": "a number"}[info.type]
    return Diagnostic(
        codes.T_NOT_IN_RELEASE,
        "error",
        f"{key}: TRL {release.release} reads {key} as {kind}, and its parser refuses {yaml_value(value)}",
        fields=(key,),
        hint=f"write {kind} for TRL {release.release}"
        + (" (true = 'group', false = 'none'; the words came with TRL 0.22)" if key == "scale_rewards" else ""),
    )


def trainer_refuses(key: str, value: Any, release: ReleaseSurface) -> Diagnostic | None:
    """A value the release parses but its trainer refuses (`loss_type: cispo` in 0.19, whose trainer knows grpo,
    bnpo and dr_grpo and raises "Unknown loss type" for the rest)."""
    allowed = release.choices.get(key)
    if not allowed or not isinstance(value, str) or value in allowed:
        return None
    listed = ", ".join(allowed)
    return Diagnostic(
        codes.T_CHOICE,
        "error",
        f"{key}: TRL {release.release}'s trainer accepts {listed}, and refuses {yaml_value(value)}",
        fields=(key,),
        hint=f"use one of {listed} for TRL {release.release}, or run a TRL release that has {value}",
    )


def _converts(text: str, kind: type) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=1)
def reference_deprecations() -> dict[str, str | None]:
    """TRL 1.16's deprecations (the keys the engine's GRPO-D rules are about), from its own source."""
    from grpo_schema.versions import surface

    return dict(surface(REFERENCE).deprecations)


def deprecated_in_release(mapping: dict[str, Any], release: ReleaseSurface) -> list[Diagnostic]:
    """The release's own deprecations that no 1.16 rule speaks for (max_prompt_length in 0.26, use_liger_loss in
    0.25-0.27, ...), for each key the file sets to something other than the release's default: the release warns
    then (its checks are `if self.key` / `is not None`)."""
    found = []
    for key, use in release.deprecations.items():
        if key in reference_deprecations() or key not in mapping:
            continue
        default = release.fields[key].default
        if mapping[key] == default or (_off(mapping[key]) and _off(default)):
            continue
        found.append(deprecation(key, use, release, codes.D_IN_RELEASE, written=mapping))
    return found


def deprecation(
    key: str, use: str | None, release: ReleaseSurface, code: str, written: Any = (), severity: str = "warning"
) -> Diagnostic:
    """`key is deprecated in TRL X`, with the key that release reads instead (never one it lacks)."""
    r = release.release
    if key in release.unused:
        return Diagnostic(
            code,
            severity,
            f"{key} is deprecated in TRL {r}, which parses it but no longer uses it: the setting has no effect",
            fields=(key,),
            hint=f"remove {key}; TRL {r} reads no other key in its place",
            fix=Fix(unset=(key,), safe=False, title=f"remove {key}"),
        )
    if use is None:
        return Diagnostic(
            code,
            severity,
            f"{key} is deprecated in TRL {r}, which reads no other key in its place",
            fields=(key,),
            hint=f"TRL {r} still reads {key}; keep it for that release, or remove it if you do not need the setting",
        )
    fix = None if use in written else Fix(rename={key: use}, safe=False, title=f"rename to {use}")
    return Diagnostic(
        code,
        severity,
        f"{key} is deprecated in TRL {r}; use {use}",
        fields=(key,),
        hint=f"write {use} instead (TRL {r} reads it)",
        fix=fix,
    )


def _deprecation_for_release(d: Diagnostic, release: ReleaseSurface) -> Diagnostic | None:
    """A 1.16 GRPO-D diagnostic as it holds for `release`: gone where the release does not warn about the key,
    unchanged where it says to use what 1.16 says, else re-said with the release's own replacement."""
    key = d.fields[0] if d.fields else ""
    if key not in release.deprecations:
        return None  # 1.16's rule, or a key this release does not deprecate (local_rank, GRPO-D005, is 1.16's)
    use = release.deprecations[key]
    if use == reference_deprecations().get(key):
        return d
    said = deprecation(key, use, release, d.code, severity=d.severity)
    return replace(d, message=said.message, hint=said.hint, fix=said.fix, alternatives=())


def as_release_reads(diagnostics: list[Diagnostic], release: ReleaseSurface) -> list[Diagnostic]:
    """The checker's diagnostics as they hold for this release: keys it does not read as its front end treats them
    (a warning where it ignores them), and TRL 1.16's deprecations (area D) only where the release has them too,
    with a fix the release accepts."""
    stops, how = front_end_verdict(release)
    adjusted = []
    for d in diagnostics:
        if d.code.startswith("GRPO-D") and d.code != codes.D_IN_RELEASE:
            kept = _deprecation_for_release(d, release)
            if kept is not None:
                adjusted.append(kept)
            continue
        if d.code in IGNORED_WHEN_UNREAD and not stops:
            d = Diagnostic(
                d.code,
                "warning",
                f"{d.message}: TRL {release.release} {how.removeprefix('it ')}",
                d.fields,
                d.line,
                d.column,
                d.hint,
                d.fix,
                d.origin,
                d.alternatives,
            )
        adjusted.append(d)
    return adjusted


# --- what a surface says about a key, for the release ------------------------------------------------------------
# The fields' texts (descriptions, the rules that read a field) are written for TRL 1.16. For another release a
# sentence is left out when it names a key that release lacks, or tells of a deprecation it does not have: renaming
# as told must never name a key the release's parser stops on.

_KEYISH = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_SENTENCE = re.compile(r"(?<=[.;!?)])\s+(?=[A-Z(`'\"])")
_DEPRECATION_WORDS = re.compile(r"^\(?(?:Deprecated|Older name)\b|deprecated alias", re.IGNORECASE)
_VALUE_LINE = re.compile(r"^(- )?`[^`]*`: ")
CHECKED = "**Checked with other fields by:** "


@lru_cache(maxsize=1)
def known_keys() -> frozenset[str]:
    """Every key some release reads, and every key of TRL 1.16's models."""
    from grpo_schema.versions import releases, surface

    keys = set(compiled("config").fields)
    for name in releases():
        keys |= set(surface(name).fields)
    return frozenset(keys)


@lru_cache(maxsize=64)
def _lacking_in(version: str) -> frozenset[str]:
    from grpo_schema.versions import surface

    return known_keys() - set(surface(version).fields)


def _lacking(release: ReleaseSurface) -> frozenset[str]:
    return _lacking_in(release.release)


def holds_for(sentence: str, key: str, release: ReleaseSurface) -> bool:
    """Whether a sentence about `key` names only keys the release reads, and no deprecation it lacks."""
    if any(token in _lacking(release) for token in _KEYISH.findall(sentence)):
        return False
    return key in release.deprecations or not _DEPRECATION_WORDS.search(sentence)


def _sentences(text: str, key: str, release: ReleaseSurface) -> str:
    prefix = _VALUE_LINE.match(text)  # `- \`steps\`: ...`: the value stays, its explanation is filtered
    head = prefix.group(0) if prefix else ""
    kept = " ".join(s for s in _SENTENCE.split(text[len(head) :]) if holds_for(s, key, release))
    return head + kept if kept else head.rstrip().rstrip(":")


def _checked(paragraph: str, key: str, release: ReleaseSurface) -> str:
    """The rules paragraph: a rule stays when its text holds for the release (a GRPO-D rule only where the release
    deprecates the key)."""
    body, tail = paragraph[len(CHECKED) :], ""
    cut = body.rfind(". `grpo codes")
    if cut >= 0:
        body, tail = body[:cut], body[cut:]
    kept = [
        item
        for item in body.split("; ")
        if holds_for(item, key, release) and not (item.startswith("`GRPO-D") and key not in release.deprecations)
    ]
    return CHECKED + "; ".join(kept) + tail if kept else ""


def for_release(text: str, key: str, release: ReleaseSurface, fallback: str = "") -> str:
    """1.16's text about `key`, as it holds for `release` (`fallback` stands in for a first paragraph left empty)."""
    paragraphs = []
    for index, paragraph in enumerate(text.split("\n\n")):
        if paragraph.startswith(CHECKED):
            said = _checked(paragraph, key, release)
        elif paragraph.startswith("**"):  # **Default:** ... (the release's own, written by the surface)
            said = paragraph
        else:
            said = "\n".join(line for line in (_sentences(x, key, release) for x in paragraph.split("\n")) if line)
        if index == 0 and not said:
            said = fallback
        if said:
            paragraphs.append(said)
    return "\n\n".join(paragraphs)


def status(key: str, release: ReleaseSurface) -> str:
    """Whether the release reads `key`, whether it deprecates it, and from which later release it is not read."""
    from grpo_schema.versions import parse_version, releases, surface

    r = release.release
    if key not in release.fields:
        return f"not read by TRL {r}"
    said = f"read by TRL {r} ({release.fields[key].source or 'its parser'})"
    if key in release.deprecations:
        said += "; " + deprecation(key, release.deprecations[key], release, codes.D_IN_RELEASE).message
    later = [n for n in releases() if parse_version(n) > release.version and key not in surface(n).fields]
    return said + (f"; not read from TRL {later[0]} on" if later else "")
