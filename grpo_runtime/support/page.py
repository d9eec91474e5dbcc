"""docs/runtime-fields.md: the field table as a page (`python -m grpo_runtime.support.page --write`)."""

from __future__ import annotations

import sys

from grpo_runtime.common import CATEGORIES
from grpo_runtime.support.fields import CONFIG_FIELDS, LAUNCH_FIELDS


def markdown() -> str:
    """The field table as a page: every field, its category and where / why."""
    lines = [
        "# What grpo_runtime does with each field",
        "",
        "Generated from `grpo_runtime/support/fields/` (`python -m grpo_runtime.support.page --write`); a test fails when "
        "this page is stale.",
        "",
        "Every field of TRL 1.16's `trl grpo` surface and every `accelerate launch` key a config file may "
        "carry is in one of four categories:",
        "",
        "- **honoured**: the run does what the field says (where);",
        "- **refused**: a value other than the default is refused before anything loads (exit 3 from "
        "`grpo train` / `grpo launch`, an error in `--dry-run` and in the service's launch check);",
        "- **warned**: the run goes ahead with a warning saying why the field cannot change it;",
        "- **ignored**: TRL 1.16 ignores it in the same setting too (why).",
        "",
        "An honoured field may still refuse or warn about some values; those limits are listed with it. The "
        "codes are `grpo codes` area U.",
        "",
    ]
    for title, entries in (("Config fields", CONFIG_FIELDS), ("Launch keys (`accelerate launch`)", LAUNCH_FIELDS)):
        counts = ", ".join(f"{sum(e.category == c for e in entries.values())} {c}" for c in CATEGORIES)
        lines += [
            f"## {title}: {len(entries)} ({counts})",
            "",
            "| field | category | where / why | refusals and warnings |",
            "|---|---|---|---|",
        ]
        for name in sorted(entries):
            entry = entries[name]
            limits = "; ".join(
                f"{'refused' if limit.refuse else 'warned'} ({limit.code})"
                + ("" if callable(limit.message) or entry.category != "honoured" else f": {limit.message}")
                + (
                    f"; to run: {limit.hint}"
                    if limit.hint and (entry.category == "refused" or callable(limit.message))
                    else ""
                )
                for limit in entry.limits
            )
            lines.append(f"| `{name}` | {entry.category} | {entry.note.replace('|', '/')} | {limits} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "runtime-fields.md"
    if "--write" in sys.argv:
        page.write_text(markdown(), encoding="utf-8")
    else:
        sys.stdout.write(markdown())
