"""`--trl-version`: the option every command takes, and the release a config is judged against when it is not
given (the installed trl, a pin in the repository, else 1.16: grpo_schema.versions.detect)."""

from __future__ import annotations

import argparse
import sys


def add_trl_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trl-version",
        metavar="X.Y[.Z]",
        default=None,
        help="judge against this TRL release (0.14 on; default: the trl installed beside this "
        "Python, else a pin in the repository's requirements, else 1.16)",
    )


def _warn_if_newer(version: str) -> None:
    import warnings

    from grpo_schema.versions.tables import NewerThanTablesWarning, surface

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NewerThanTablesWarning)
        surface(version)
    for warning in caught:
        print(f"grpo: warning: {warning.message}", file=sys.stderr)


def _comment_version(path: str) -> str | None:
    """The release a file's `# grpo: --trl-version X` comment names (None: no comment, or one that cannot be read;
    the check then reports the comment's problem on its line)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"grpo:" not in data:  # most files: the comment reader is not even loaded
        return None
    from grpo_schema.engine.infile import read_file_settings

    try:
        return read_file_settings(data).trl_version
    except ValueError:
        return None


def judged_release(flag: str | None, path: str | None) -> dict:
    """trl_version and where it came from, for a config at `path`, in the order every surface uses
    (grpo_schema.engine.infile.judged_release: flag > the file's `# grpo:` comment > installed trl > repository pin >
    1.16). A version that cannot be judged is a ValueError naming the supported range; a newer one than the tables
    is judged as the newest, with a warning."""
    from grpo_schema.engine.infile import judged_release as ordered

    file = None if path in (None, "-") else path
    if flag is not None:
        from grpo_schema.versions import VersionError, parse_version

        try:
            parse_version(flag)
        except VersionError as exc:
            raise ValueError(f"--trl-version: {exc}") from None
    try:
        found = ordered(_comment_version(file) if flag is None and file else None, flag, "flag", file)
    except ValueError as exc:  # VersionError: the installed trl or a pin is no version, or older than GRPO
        raise ValueError(f"the trl version found: {exc}") from None
    if not found["trl_version"].startswith("1.16"):  # 1.16 is the engine's own: no table to look up
        _warn_if_newer(found["trl_version"])
    return found
