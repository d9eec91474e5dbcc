"""Run-health findings in words: one line per finding for live output, and the report `grpo health` prints."""

from __future__ import annotations

from grpo_schema.health.findings import HealthFinding


def finding_line(finding: HealthFinding) -> str:
    """`grpo health: GRPO-A005 error at step 3: loss is NaN ... (fix: ...)` on one line."""
    where = ""
    if finding.steps:
        first, last = finding.steps
        where = f" at step {first}" if first == last else f" at steps {first}-{last}"
        if finding.extent and len(finding.extent.get("stretches") or ()) > 1:
            where = f" from step {first}"  # the message lists its stretches
    diagnostic = finding.diagnostic
    text = f"grpo health: {diagnostic.code} {diagnostic.severity}{where}: {diagnostic.message}"
    if diagnostic.hint:
        text += f"; {diagnostic.hint}"
    if diagnostic.fix is not None and (diagnostic.fix.set or diagnostic.fix.unset):
        text += f" (fix: {fix_text(diagnostic.fix)})"
    return text


def cleared_line(finding: HealthFinding, step: int) -> str:
    """`grpo health: GRPO-A009 cleared at step 12: no longer holds on the run so far (was: ...)`"""
    return (
        f"grpo health: {finding.code} cleared at step {step}: no longer holds on the run so far "
        f"(was: {finding.diagnostic.message})"
    )


def fix_text(fix) -> str:
    parts = [f"{name}: {value}" for name, value in fix.set.items()] + [f"unset {name}" for name in fix.unset]
    return ", ".join(parts)


def render_report(reports: list) -> str:
    lines: list[str] = []
    for report in reports:
        if report.errors:
            lines += [f"{report.path}: error: {message}" for message in report.errors]
            continue
        count = len(report.findings)
        era = f", {report.era}" if report.era and report.era != report.source else ""
        lines.append(
            f"{report.path} ({report.source}{era}, {report.steps} step{'s' if report.steps != 1 else ''}"
            f"{', still running' if report.live else ''}): {report.verdict}, "
            f"{count} finding{'s' if count != 1 else ''}"
        )
        for finding in report.findings:
            lines.append("  " + finding_line(finding).removeprefix("grpo health: "))
            if finding.values:
                lines.append(f"      {finding.metric or 'values'}: {', '.join(str(v) for v in finding.values)}")
        lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"
