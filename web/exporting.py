"""Export for the form: the edited config as YAML, written into the imported file when there is one.

When the form started from a file, the export is that file with the form's edits made in place through
grpo_schema.engine.yamledit (the engine behind `grpo migrate` and `grpo validate --fix`): renames keep their line,
removed keys leave their comments, changed values are rewritten on their own line, new keys are appended. Values
the form did not change are not rewritten, so `1.0` stays `1.0` and every comment and key order stays. Without a
file, or when an edit cannot be made in the text, the canonical writer (grpo_web.yamltext) writes the whole config.
Either way the first line is the schema modeline for editors (added above an imported file that has none).

`world_size`: the toolbar's world size. Written as `num_processes` (the key `accelerate launch`, `grpo validate`
and `grpo launch` read) unless the caller asks not to; either way a note says what the file declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.api.modeline import modeline
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text
from grpo_web.yamltext import config_yaml


@dataclass
class Exported:
    yaml: str
    notes: list[str] = field(default_factory=list)
    kept_source: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"yaml": self.yaml, "notes": self.notes, "kept_source": self.kept_source}


def same_value(a: Any, b: Any) -> bool:
    """Equal as the form sees values: 1 and 1.0 are the same number (JSON cannot tell them apart), but a boolean
    is never a number, and containers compare item by item (and key order of nested mappings counts)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def with_world_size(config: dict[str, Any], world_size: int | None, write: bool) -> tuple[dict[str, Any], list[str]]:
    """The config with num_processes for the toolbar's world size (when asked), and what the file declares."""
    declared = config.get("num_processes")
    if world_size is None:
        if isinstance(declared, int) and not isinstance(declared, bool):
            return config, [f"World size {declared}: num_processes is in the file."]
        return config, ["No world size in the file: grpo validate and accelerate launch assume 1 process."]
    if declared == world_size:
        return config, [f"World size {world_size}: num_processes is in the file."]
    if write:
        return {**config, "num_processes": world_size}, [
            f"num_processes: {world_size} written for the toolbar's world size (grpo validate, grpo launch and "
            "accelerate launch read it)."]
    current = f"num_processes: {declared}" if declared is not None else "no num_processes (1 process)"
    return config, [f"The toolbar's world size {world_size} is NOT in this file ({current}): pass "
                    f"--world-size {world_size} to grpo validate and --num_processes {world_size} to accelerate "
                    "launch."]


def edit_of(old: dict[str, Any], new: dict[str, Any], renames: dict[str, str]) -> Fix:
    """The one Fix that turns the file's mapping into the form's (renames first, as the form applied them)."""
    rename = {a: b for a, b in renames.items() if a in old and a not in new and b in new and b not in old}
    after = {rename.get(k, k): v for k, v in old.items()}
    unset = tuple(k for k in after if k not in new)
    changed = {k: v for k, v in new.items() if k not in after or not same_value(after[k], v)}
    return Fix(rename=rename, unset=unset, set=changed, safe=True, title="the form's edits")


def export_config(config: dict[str, Any], schema_url: str, source: str | None = None,
                  renames: dict[str, str] | None = None, world_size: int | None = None,
                  write_world_size: bool = True) -> Exported:
    config, notes = with_world_size(config, world_size, write_world_size)
    if source:
        loaded = load_yaml(source)
        if loaded.ok and isinstance(loaded.data, dict):
            try:
                text = apply_fix_to_text(source, edit_of(loaded.data, config, renames or {}))
                if "yaml-language-server:" not in text.split("\n", 1)[0]:  # editors find the schema from it
                    text = modeline(schema_url) + "\n" + text
                return Exported(text, ["Written into the imported file: its comments and key order are kept.",
                                       *notes], kept_source=True)
            except (EditError, TypeError, ValueError) as exc:  # EditError says why
                notes.insert(0, f"The imported file's comments could not be kept ({exc}); the config is written anew.")
        else:
            notes.insert(0, "The imported text is not a YAML mapping; the config is written anew.")
    return Exported(config_yaml(config, schema_url), notes)
