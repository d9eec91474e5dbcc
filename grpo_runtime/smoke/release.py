"""A file judged before the smoke runs it: a file written for another TRL release is first validated as that
release reads it (its errors stop the smoke; the keys it ignores are left out of the run), and a file that no release
and no known script reads is named as another trainer's."""

from __future__ import annotations

import contextlib
import io
import sys
import time

from grpo_runtime.launch.checking import EXIT_CANNOT_RUN, EXIT_INVALID, check
from grpo_runtime.smoke.report import base_report, finish


def is_reference(version: str) -> bool:
    """The runtime's own release (TRL 1.16), whose files run as written."""
    from grpo_schema.engine.release import release_surface

    return release_surface(version) is None


def release_check(args, release: dict) -> dict | None:
    """A file written for another TRL release is first validated as that release reads it (at the world size the
    smoke picks, under the training script's profile it is written for, as the smoke's own check does): its errors
    stop the smoke test (exit 1), and a file valid for it is not held to TRL 1.16's names."""
    if is_reference(release["trl_version"]):
        return None
    started = time.perf_counter()
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        judged = check(
            args.file, args.overrides, args.world_size, args.allow_env, args.profiles, dry_run=True, release=release
        )
    if not isinstance(judged, int):
        if not args.profiles and judged.profile_args:
            args.profiles = list(judged.profile_args)  # the script's profile the file is written for, found here
        args.ignored_keys = ignored_keys(judged)
        return None
    if args.format == "text":
        sys.stderr.write(quiet.getvalue())
    report = base_report(args)
    report.update(
        exit_code=judged,
        component="config",
        log=quiet.getvalue()[-4000:],
        error=f"{args.file} is not valid for TRL {release['trl_version']}"
        if judged == EXIT_INVALID
        else f"cannot read {args.file}",
    )
    if judged == EXIT_INVALID:
        written_for_another_trainer(args, report, release)
    return finish(report, started)


# What a release's front end does not read, and ignores (a warning): unknown keys, a downstream script's, keys
# renamed, removed or added after it, launch keys its `trl grpo` does not take.
UNREAD = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K006", "GRPO-K009", "GRPO-K010"}


def ignored_keys(judged) -> list[str]:
    """The file's top-level keys the judged release ignores: the run leaves them out, as the release would."""
    raw = judged.raw if isinstance(judged.raw, dict) else {}
    return list(
        dict.fromkeys(
            d.fields[0]
            for d in judged.diagnostics
            if d.code in UNREAD and d.fields and d.severity != "error" and d.fields[0] in raw
        )
    )


def written_for_another_trainer(args, report: dict, release: dict | None) -> None:
    """Keys and rewards that no release and no known script reads: the file is another trainer's, which grpo_runtime
    cannot run (exit 3, the keys named), not a config to correct."""
    from grpo_runtime.launch.checking import another_trainer
    from grpo_schema import check_file

    try:
        result = check_file(
            args.file,
            world_size=args.world_size,
            overrides=args.overrides or None,
            allow_env=args.allow_env,
            profiles=list(args.profiles),
            allow_profile_import=True,
            **(release or {}),
        )
    except (OSError, KeyError, ImportError, AttributeError):
        return
    reason = another_trainer(result).lstrip(".\n")
    if reason:
        report.update(exit_code=EXIT_CANNOT_RUN, component="trainer", error=f"{args.file}: {reason}")
