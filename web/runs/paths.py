"""Paths a run reads (the model, the dataset, the reward model, DeepSpeed / FSDP / accelerate config files), resolved
once when the service validates the config: the config is validated with the resolved paths, so what is validated
is what runs.

A run's working directory is its own folder (RUNS_DIR/<id>), so `demo/model` would mean RUNS_DIR/<id>/demo/model
there and something else in the form that validated it. The service resolves a relative path against its own
folder (where `grpo serve` started) instead: a value that starts with `./` or `../`, or one that names a file or
folder there, becomes an absolute path, passed to the run as a `--set` override (the posted text stays as
posted). A value that is neither (`Qwen/Qwen2.5-0.5B`) is a Hub name and stays as it is.

The memory planner (POST /api/v1/plan) reads the same model folder and dataset from the same places when runs are
on, within the limits of plan_reads, so the form's memory panel plans with the data's prompt lengths as
`grpo plan` does in the service's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from grpo_schema.engine.hardware.reads import DATASET, MODEL, TEMPLATE, LocalReads

READ_FIELDS = ("model_name_or_path", "dataset_name", "reward_model_name_or_path", "deepspeed", "fsdp_config")
LAUNCH_READ_FIELDS = ("config_file", "accelerate_config")  # `accelerate launch` keys of the file


def looks_relative(value: str) -> bool:
    return value in (".", "..") or value.startswith(("./", "../")) or (os.sep != "/" and value.startswith(".\\"))


def resolve_reads(config: Any, base: Path, launch: dict[str, Any] | None = None) -> dict[str, str]:
    """{field: absolute path} for the fields whose value is a relative local path (see the module docstring).
    A field that holds a mapping (an inline DeepSpeed config) or a bundled name (`accelerate_config: zero3`) that
    names nothing in `base` stays as it is."""
    values = [(name, getattr(config, name, None)) for name in READ_FIELDS]
    values += [(name, (launch or {}).get(name)) for name in LAUNCH_READ_FIELDS]
    found: dict[str, str] = {}
    for name, value in values:
        if not isinstance(value, str) or not value or "\x00" in value or value.startswith("~"):
            continue
        path = Path(value)
        if path.is_absolute():
            continue
        try:
            if looks_relative(value) or (base / path).exists():
                found[name] = str((base / path).resolve())
        except (OSError, ValueError):  # a name too long for a path, or not one at all: a Hub name
            continue
    return found


# --- what the planner reads ------------------------------------------------------------------------------------------

PLAN_READS = (MODEL, DATASET)
# With runs off the service reads no file a client names; the plan says how to get the data's prompt lengths.
RUNS_OFF = LocalReads(
    model=False,
    dataset=False,
    prompt_option="prompt_length",
    refused={
        DATASET: "the service reads no dataset while its runs are off (an operator who starts it with "
        "`grpo serve --enable-runs` lets it read the data a run would; or run `grpo plan` where the "
        "data is)",
        MODEL: "it reads no model folder while its runs are off",
    },
)


def plan_reads(config: Any, base: Path, token_holder: bool) -> LocalReads:
    """What the planner may read, with runs on, of the model folder and dataset `config` names: what a run would
    read, found where a run finds it (resolve_reads: a relative path from the service's folder `base`, a Hub name
    in the Hugging Face caches, never downloaded). A path that leads out of `base` (absolute, `..`, a link) is read
    only for a client that holds the runs token, as only such a client launches a run that reads it; `~` never,
    as a run does not expand it; a chat template written in the config (an open-r1 recipe's) is rendered for that
    client only. Each thing not read has its reason, which the plan's assumptions state."""
    refused: dict[str, str] = {}
    for name in PLAN_READS:
        value = getattr(config, name, None)
        why = refusal(value, base, token_holder) if isinstance(value, str) and value else None
        if why:
            shown = value if len(value) <= 120 else value[:117] + "..."
            refused[name] = f"the service does not read {name} {shown!r}: {why}"
    if not token_holder:  # jinja's sandbox bounds what a template may touch, not how long it runs
        refused[TEMPLATE] = (
            "the service renders a chat_template written in the config only for a client that "
            "sends the runs token; the model's own was used"
        )
    return LocalReads(
        model=MODEL not in refused,
        dataset=DATASET not in refused,
        base=base,
        refused=refused,
        prompt_option="prompt_length",
    )


TOKEN_HINT = "send the runs token (Authorization: Bearer) to have it read, as only a token holder launches runs"


def refusal(value: str, base: Path, token_holder: bool) -> str | None:
    """Why the planner may not read local path `value` for this client; None when it may (or when the value is a
    Hub name, read from the caches only)."""
    if "\x00" in value:
        return "it is not a path"
    if value.startswith("~"):
        return "a run reads it as written, without expanding `~`; write the absolute path"
    path = Path(value)
    try:
        if path.is_absolute():
            return None if token_holder else f"an absolute path; {TOKEN_HINT}"
        if not (looks_relative(value) or (base / path).exists()):
            return None  # a Hub name
        inside = (base / path).resolve().is_relative_to(base.resolve())
    except (OSError, ValueError):  # a name too long for a path, or not one at all: a Hub name
        return None
    if inside or token_holder:
        return None
    return f"it leads out of the service's folder {str(base)!r} ('..' or a link); {TOKEN_HINT}"
