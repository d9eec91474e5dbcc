"""Run-health findings in words: one line per finding for live output, and the report `grpo health` prints."""

from __future__ import annotations

from grpo_schema.health.findings import HealthFinding


def finding_line(finding: HealthFinding) -> str:
    """`grpo health: GRPO-A005 error at step 3: loss is NaN ... (fix: ...)` on one line."""
    where = ""
    if finding.steps:
        first, last = finding.steps
        where = f" at step {first}" if first == last else f" at steps {first}-{last}"
    diagnostic = finding.diagnostic
    text = f"grpo health: {diagnostic.code} {diagnostic.severity}{where}: {diagnostic.message}"
    if diagnostic.hint:
        text += f"; {diagnostic.hint}"
    if diagnostic.fix is not None and (diagnostic.fix.set or diagnostic.fix.unset):
        text += f" (fix: {fix_text(diagnostic.fix)})"
    return text


def fix_text(fix) -> str:
    parts = [f"{name}: {value}" for name, value in fix.set.items()] + [f"unset {name}" for name in fix.unset]
    return ", ".join(parts)


def render_report(reports: list) -> str:
    lines: list[str] = []
    for report in reports:
        if report.errors:
            lines += [f"{report.path}: error: {message}" for message in report.errors]
            continue
        state = "healthy" if report.healthy else "unhealthy"
        count = len(report.findings)
        lines.append(f"{report.path} ({report.source}, {report.steps} step{'s' if report.steps != 1 else ''}"
                     f"{', still running' if report.live else ''}): {state}, {count} finding{'s' if count != 1 else ''}")
        for finding in report.findings:
            lines.append("  " + finding_line(finding).removeprefix("grpo health: "))
            if finding.values:
                lines.append(f"      {finding.metric or 'values'}: {', '.join(str(v) for v in finding.values)}")
        lines += [f"  note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"
