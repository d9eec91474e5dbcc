"""`grpo doctor`'s rules: small named functions, each yielding diagnostics with a code (GRPO-C...) and the pin
that fixes them in requirements syntax. They read an `Environment` (doctor.environment), the TRL release's
committed requirements (versions/releases/requirements.json) and the config's features; nothing is imported.

The rules live by area: doctor.context (what a rule reads, the registry), doctor.features (the config's features),
doctor.release_rules (the release and its requirements, the known-bad rows), doctor.feature_rules (what each feature
needs). This module gathers them, in the order of the report, with the findings about the file's own lines.
A rule is registered with `@doctor_rule(code, severity)`, which declares its code beside it as `@rule` does for a
config rule: the docstring's first line is the code's title, the rest its explanation (`grpo codes CODE`). A code
that several rules share (an unpinned requirement) or that no rule function yields alone is declared beside the
function that yields it."""

from __future__ import annotations

from typing import Iterator

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic

from . import feature_rules  # noqa: F401  (registers the rules: the release's first, then the features')
from .context import RULES, UNPINNED, Context, check_requirement, doctor_rule, release_data, tabled_release
from .features import deepspeed_config, deepspeed_stage, features, vllm_mode
from .release_rules import KNOWN_RISKY, row_matches

UNREAD_LINE = declare(
    "GRPO-C015",
    "warning",
    "line of a freeze or requirements file not understood",
    "The line is not a requirement (NAME==VERSION, NAME @ URL, -e URL#egg=NAME); it is left out of "
    "the check. A freeze file pins exact versions.",
)
NO_METADATA = declare(
    "GRPO-C016",
    "warning",
    "package installed without metadata",
    "Files of a package are on the path without a readable .dist-info (copied in, or half removed), "
    "or its metadata has no version: no version check can judge it.",
)


def file_problems(ctx: Context) -> Iterator[Diagnostic]:
    for line, text, problem in ctx.env.problems:
        if line is not None:
            kept = "pins exact versions" in problem  # listed, but its version is open
            yield Diagnostic(
                UNREAD_LINE,
                "warning",
                f"line {line}: {text!r}: {problem}",
                line=line,
                column=1,
                hint="write the version installed, as pip freeze does (NAME==VERSION)"
                if kept
                else "fix or delete the line; it is left out of the check",
            )
        else:
            yield Diagnostic(
                NO_METADATA,
                "warning",
                f"{text}: {problem}",
                hint="reinstall the package with pip so that its metadata is written",
            )


__all__ = [
    "KNOWN_RISKY",
    "NO_METADATA",
    "RULES",
    "UNPINNED",
    "UNREAD_LINE",
    "Context",
    "check_requirement",
    "deepspeed_config",
    "deepspeed_stage",
    "doctor_rule",
    "features",
    "file_problems",
    "release_data",
    "row_matches",
    "tabled_release",
    "vllm_mode",
]
