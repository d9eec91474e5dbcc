"""A GRPOConfig(...) call written out as the flat YAML config `trl grpo`, `grpo validate`, `grpo smoke` and
`grpo launch` read: the values the call sets, the release and profile it was judged with in a `# grpo:` comment
(so the YAML is judged the same way), and what could not be read said in comments, never filled in."""

from __future__ import annotations

from typing import Any

import yaml

from grpo_schema.dialects.python.as_python import script_only_keys
from grpo_schema.dialects.python.check import PythonCheck
from grpo_schema.dialects.python.reading import CallReading
from grpo_schema.engine.check import CheckResult


def trained_yaml(check: PythonCheck, index: int) -> tuple[str | None, str]:
    """(YAML of what the run trains with, '') for `grpo plan` and `grpo doctor`: the call's values with Unsloth's
    rewrite applied; (None, why) when a value is only known at run time (a plan would be a guess)."""
    reading = check.calls[index]
    missing = [f"{name} = {value.source}" for name, value in reading.unknown.items()]
    missing += [f"{part.source}" for part in reading.call.opaque]
    if missing:
        return None, (
            f"call {index + 1} (line {reading.line}) has values known only at run time: "
            f"{'; '.join(missing[:5])}; `grpo export` writes the call as YAML to fill them in"
        )
    return export_yaml(check, index, as_trained=True), ""


def export_yaml(check: PythonCheck, index: int = 0, as_trained: bool = False) -> str:
    reading: CallReading = check.calls[index]
    result: CheckResult = check.results[index]
    lines = _header_lines(check, index, reading, result)
    script = script_only_keys(result.trl_version)
    body: dict[str, Any] = {}
    for name, value in reading.mapping.items():
        if name in reading.unknown:
            continue
        if name in script:
            lines.append(
                f"# {name} is an argument of the `trl grpo` script, not of GRPOConfig (the call raises "
                f"TypeError on it): {_one_line(yaml.safe_dump(value, default_flow_style=True).strip())}"
            )
            continue
        body[name] = value
    if as_trained and result.sources.get("per_device_train_batch_size") == "Unsloth's rewrite":
        body["per_device_train_batch_size"] = result.config.per_device_train_batch_size
    if as_trained and check.source.tree is not None and "model_name_or_path" not in body:
        from grpo_schema.dialects.python.calls import model_name

        model = model_name(check.source.tree)  # the planner sizes the model GRPOTrainer is given
        if model:
            body = {"model_name_or_path": model, **body}
    text = "\n".join(lines) + "\n"
    if body:
        text += yaml.safe_dump(body, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    return text


def _header_lines(check: PythonCheck, index: int, reading: CallReading, result: CheckResult) -> list[str]:
    """The comments above the YAML: the `# grpo:` settings it was judged under, where it came from, Unsloth's
    batch, and what only the running script knows."""
    settings = [f"--trl-version {result.trl_version}"]
    if check.unsloth:
        settings.append("--profile unsloth")
    if result.sources.get("world_size") not in (None, "default", "file"):
        settings.append(f"--world-size {result.world_size}")
    where = f"cell {reading.cell} line {reading.line}" if reading.cell is not None else f"line {reading.line}"
    lines = [
        f"# grpo: {' '.join(settings)}",
        f"# Exported by `grpo export` from {check.path}, {where}: {reading.call.callee}(...) "
        f"(call {index + 1} of {len(check.calls)}).",
        f"# Judged as TRL {result.trl_version} ({result.trl_version_source}).",
    ]
    if result.sources.get("per_device_train_batch_size") == "Unsloth's rewrite":
        lines.append(
            f"# Unsloth trains with per_device_train_batch_size={result.config.per_device_train_batch_size} "
            "(its config class rewrites the batch below)."
        )
    unknown = [(name, value) for name, value in reading.unknown.items()]
    opaque = reading.call.opaque
    if unknown or opaque:
        lines.append("# Not known until the script runs (cannot judge statically): fill these in and uncomment.")
        for name, value in unknown:
            lines.append(f"# {name}:   # = {_one_line(value.source)} ({_one_line(value.why)})")
        for part in opaque:
            lines.append(f"# ...and whatever {_one_line(part.source)} sets ({_one_line(part.reason)})")
    return lines


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= 160 else flat[:157] + "..."
