"""The packages of the environment that will run a config, read from metadata: never imported.

Four sources, one shape (`Environment`):
- this interpreter (`current`): its distributions' metadata, read in this process with importlib.metadata;
- another interpreter (`--python PATH`): the same probe run by that interpreter (`PATH -I -c PROBE`), which prints
  JSON; nothing of the environment is imported, only its metadata files are read;
- a `pip freeze` / lock file (`--freeze FILE`): `name==version` lines, `name @ URL` lines, pip-tools/uv
  `--hash` continuations, `uv.lock` / `poetry.lock` TOML; lines that are none of these are reported by number;
- a requirements file (`--requirements FILE`): the same syntax, but a package without an exact pin is
  "listed, version open": rules that need its version say so instead of guessing.

What a rule may read is the same from every source (names, versions, the freeze line a package came from), so a
`pip freeze` of an environment gives the same findings as `--python` on it. Facts only metadata on disk has (install
times, console scripts) are kept apart in `Package.extra` and used only where they say something a freeze cannot.

The shape is doctor.packages, an interpreter's reading doctor.probe, a file's doctor.files, and what pip installs
with a requirements file's packages doctor.implied; this module names the source a command was given.
"""

from __future__ import annotations

from .files import from_file
from .packages import (
    ALIASES,
    KEY_PACKAGES,
    Environment,
    EnvironmentError_,
    Package,
    canonical,
    flash_attn_build,
    torch_build,
)
from .probe import IMPORT_NAMES, PROBE, current, from_python


def read(python: str | None = None, freeze: str | None = None, requirements: str | None = None) -> Environment:
    """The environment named by at most one of the options; this interpreter's when none is given."""
    given = [x for x in (python, freeze, requirements) if x is not None]
    if len(given) > 1:
        raise EnvironmentError_("give at most one of --python, --freeze and --requirements")
    if python is not None:
        return from_python(python)
    if freeze is not None:
        return from_file(freeze, "freeze")
    if requirements is not None:
        return from_file(requirements, "requirements")
    return current()


__all__ = [
    "ALIASES",
    "IMPORT_NAMES",
    "KEY_PACKAGES",
    "PROBE",
    "Environment",
    "EnvironmentError_",
    "Package",
    "canonical",
    "current",
    "flash_attn_build",
    "from_file",
    "from_python",
    "read",
    "torch_build",
]
