"""Which TRL release table a config is judged by, and the values that release stands for where the file is
silent: its defaults, what it did before a key existed, its batch meaning and its prompt cap (None everywhere
for TRL 1.16, whose tables are the engine's own)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from grpo_schema.engine.compiled import compiled

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
