"""What `grpo smoke` reports: the report's fields before anything runs and when it ends, the completions the run
generated and the exception its log ends with, read from the scratch folder, and the report as text
(`--format text`; `--format json` prints the report as it is)."""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path

from grpo_runtime.launch.checking import EXIT_FAILED, EXIT_OK
from grpo_schema.engine.words import plural

SHOWN_COMPLETIONS = 4
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Invalid|Fault)):\s?(.*)$")
REPORT_VERSION = 1


def base_report(args) -> dict:
    return {
        "version": REPORT_VERSION,
        "file": args.file,
        "engine": args.engine,
        "steps": args.steps,
        "passed": False,
        "exit_code": EXIT_FAILED,
        "groups": [],
        "world_size": None,
    }


def finish(report: dict, started: float) -> dict:
    report["passed"] = report["exit_code"] == EXIT_OK
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def generated_completions(output: Path) -> dict:
    """What the run generated, for the report: the first completions of the first generation (text, rewards) and
    a digest of every completion and reward it logged, so that two runs of the same file can be compared."""
    import hashlib

    from grpo_runtime.outputs.completions import COMPLETIONS_FILE, SAMPLE_FILE

    rows = []
    for name in (COMPLETIONS_FILE, SAMPLE_FILE):
        path = output / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    rows.append(json.loads(line))
            break
    if not rows:
        return {}
    digest = hashlib.sha256()
    for row in rows:
        digest.update(
            json.dumps(
                [row.get("step"), row.get("completion"), row.get("rewards")], sort_keys=True, default=str
            ).encode()
        )
    shown = [
        {
            "step": row.get("step"),
            "completion": completion_text(row.get("completion"))[:200],
            "rewards": row.get("rewards"),
        }
        for row in rows[:SHOWN_COMPLETIONS]
    ]
    return {"completions": shown, "completions_logged": len(rows), "completions_digest": digest.hexdigest()[:16]}


def completion_text(completion) -> str:
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return str(completion)


def last_exception(log: str) -> dict | None:
    """The last exception a log's traceback ends with: {"type", "message"}, or None."""
    for line in reversed(log.splitlines()):
        found = EXCEPTION_LINE.match(line.strip())
        if found:
            return {"type": found.group(1), "message": found.group(2)}
    return None


SYMBOLS = {"exercised": "ok ", "substituted": "sub", "not_exercised": "-- "}
OWNER_LABELS = {"user": "yours", "ours": "grpo", "library": "library"}


def doctor_section(path: str, trl_version: str | None) -> dict:
    """`grpo doctor`'s findings on this interpreter for the file: whether the environment the smoke test ran in
    could run the config under TRL (its release's requirements, known-bad combinations, the features used).
    Reported beside the smoke result; it does not change the exit code."""
    from grpo_schema.commands.doctor import run
    from grpo_schema.commands.options import UsageError

    try:
        report, results = run(path, trl_version=trl_version)
    except UsageError as exc:
        return {"ok": False, "error": str(exc), "diagnostics": []}
    return {
        "ok": report.ok,
        "trl_release": report.release,
        "packages": report.environment.summary(),
        "diagnostics": [d.to_dict() for r in results for d in r.diagnostics if d.code.startswith("GRPO-C")],
    }


def render_text(report: dict) -> str:
    lines = [
        f"grpo smoke {report['file']} ({report['engine']}, {plural(report['steps'], 'step')}"
        + (f", {plural(report['world_size'], 'process')}" if report.get("world_size") else "")
        + ")"
    ]
    if report.get("trl_version"):
        from grpo_schema.render.text import release_reason

        lines.append(f"  judged as {release_reason(report['trl_version'], report['trl_version_source'])}")
    for group in report["groups"]:
        lines.append(f"  {SYMBOLS[group['status']]} {group['group']}: {group['detail']}")
    doctor = report.get("doctor") or {}
    for diag in doctor.get("diagnostics", []):
        lines.append(
            f"  environment (grpo doctor): {diag['severity']}[{diag['code']}] {diag['message']}"
            + (f" ({diag['hint']})" if diag.get("hint") else "")
        )
    if report["passed"]:
        lines.append(f"passed in {report['seconds']}s")
        return "\n".join(lines)
    lines.append(f"FAILED ({report.get('component')}) after {report['seconds']}s: {report.get('error')}")
    exception = report.get("exception")
    if exception:
        lines.append(
            f"  {exception['type']}: {exception['message']}"[:400]
            + (f" (in the {report['phase']} phase)" if report.get("phase") else "")
        )
    where = report.get("config_line")
    if where:
        lines.append(f"  configured at {report['file']}:{where['line']}: {where['text']}")
    owners = report.get("frame_owners") or []
    for k, frame in enumerate(report.get("traceback", [])[:12]):
        owner = owners[k] if k < len(owners) else ""
        lines.append(f"    [{OWNER_LABELS.get(owner, owner)}] {frame}" if owner else f"    {frame}")
    if report.get("log") and not report.get("traceback"):
        lines.append(report["log"][-2000:])
    return "\n".join(lines)
