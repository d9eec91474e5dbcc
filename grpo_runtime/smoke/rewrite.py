"""A file written for another TRL release, run by grpo_runtime (TRL 1.16's terms): rewritten as `grpo migrate
--from R` rewrites it, and what the run reports about the rewritten copy pointed back at the user's own file."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from grpo_runtime.smoke.release import is_reference


def translate_for_runtime(args, release: dict) -> dict | None:
    """grpo_runtime follows TRL 1.16: a file written for another release runs as `grpo migrate --from R` rewrites
    it (old names under their new ones, R's defaults that 1.16 changed written out), so the steps train what R
    would. The rewritten file sits beside the original (relative paths stay the file's) for the smoke's length.
    Returns {"file": its path, "groups": the report lines saying so}, or None for a 1.16 file."""
    if is_reference(release["trl_version"]):
        return None
    from grpo_runtime.smoke.plan import NOT_EXERCISED, SUBSTITUTED
    from grpo_schema.commands.migrate import migrate_config
    from grpo_schema.render.text import release_reason

    source = Path(args.file)
    text = source.read_bytes().decode("utf-8")
    dropped = getattr(args, "ignored_keys", [])
    text = without_keys(text, dropped)
    migrated = migrate_config(text, str(source), list(args.profiles), release["trl_version"])
    migrated.text, migrated.done = without_unused_vllm_mode(text, migrated.text, migrated.done)
    target = source.with_name(f".{source.stem}.grpo-smoke-trl{migrated.target}{source.suffix or '.yaml'}")
    try:
        target.write_text(migrated.text, encoding="utf-8")
    except OSError:  # a read-only folder: a scratch file (a relative dataset path then reads from the cwd)
        handle, name = tempfile.mkstemp(prefix=f"{source.stem}.grpo-smoke-", suffix=source.suffix or ".yaml")
        os.close(handle)
        target = Path(name)
        target.write_text(migrated.text, encoding="utf-8")
    if dropped:
        groups_dropped = [
            {
                "group": f"keys TRL {release['trl_version']} ignores",
                "status": NOT_EXERCISED,
                "detail": f"{', '.join(dropped)}: left out of the run, as TRL {release['trl_version']} "
                "ignores them (the setting has no effect there)",
            }
        ]
    else:
        groups_dropped = []
    written = f"written for {release_reason(release['trl_version'], release['trl_version_source'])}"
    changes = "; ".join(migrated.done) if migrated.done else "nothing to rewrite"
    groups = [
        {
            "group": "TRL release",
            "status": SUBSTITUTED,
            "detail": f"{written}; run by grpo_runtime (TRL {migrated.target}'s terms) as `grpo migrate --from "
            f"{release['trl_version']}` rewrites it, keeping its release's behaviour: {changes}",
        }
    ]
    if migrated.cannot_keep or migrated.failed:
        groups.append(
            {
                "group": f"TRL {release['trl_version']} behaviour",
                "status": NOT_EXERCISED,
                "detail": f"TRL {migrated.target} cannot keep: " + "; ".join(migrated.cannot_keep + migrated.failed),
            }
        )
    return {"file": str(target), "text": migrated.text, "groups": groups + groups_dropped}


def without_keys(text: str, keys: list[str]) -> str:
    from grpo_schema.engine.diagnostics import Fix
    from grpo_schema.engine.yamledit import EditError, apply_fix_to_text

    for key in keys:
        try:
            text = apply_fix_to_text(text, Fix(unset=(key,), title=f"remove {key}"))
        except EditError:
            continue
    return text


def without_unused_vllm_mode(text: str, migrated: str, done: list[str]) -> tuple[str, list[str]]:
    """The release's vllm_mode written out by the rewrite, where the file neither names it nor uses vLLM: nothing of
    the run, only a warning the user's file never earned."""
    from grpo_schema.engine.yamledit import load_yaml

    mine, rewritten = load_yaml(text).data, load_yaml(migrated).data
    if (
        not isinstance(mine, dict)
        or not isinstance(rewritten, dict)
        or "vllm_mode" in mine
        or "vllm_mode" not in rewritten
        or rewritten.get("use_vllm") is True
    ):
        return migrated, done
    return without_keys(migrated, ["vllm_mode"]), [d for d in done if not d.startswith("wrote vllm_mode")]


def in_original(path: str, where: dict | None) -> dict | None:
    """A line found in the rewritten copy, at its place in the user's own file (the rewrite moves lines: a removed
    key, the defaults written at the end); a line the file does not have (a default written out) stays as found."""
    if not where:
        return where
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return where
    for number, line in enumerate(lines, 1):
        if line.strip() == where["text"]:
            return {"line": number, "text": where["text"]}
    return {**where, "written_out": True}


def lines_of_original(text: str, copy: str, copy_text: str, original: str) -> str:
    """Diagnostics printed for the rewritten copy, pointed at the user's own file: `copy:N:C` and an excerpt's
    `N |` gutter become the line of the original with the same text; a line the original lacks (a default written
    out) is said to be the rewrite's."""
    copy_lines = copy_text.splitlines()
    try:
        mine = Path(original).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        mine = []
    stripped = [line.strip() for line in mine]

    def line_in_original(number: int) -> int | None:
        if 0 < number <= len(copy_lines) and copy_lines[number - 1].strip() in stripped:
            return stripped.index(copy_lines[number - 1].strip()) + 1
        return None

    def located(match: re.Match) -> str:
        found = line_in_original(int(match.group(1)))
        if found is None:
            return f"{original} (a line the TRL 1.16 rewrite added: {copy_lines[int(match.group(1)) - 1].strip()}):"
        return f"{original}:{found}:{match.group(2)}"

    text = re.sub(rf"{re.escape(copy)}:(\d+):(\d+)", located, text)

    def gutter(match: re.Match) -> str:
        found = line_in_original(int(match.group(2)))
        return f"{match.group(1)}{found if found is not None else '+'} |"  # +: the rewrite's own line

    text = re.sub(r"^(\s*)(\d+) \|", gutter, text, flags=re.MULTILINE)
    return text.replace(copy, original)
