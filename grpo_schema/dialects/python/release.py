"""The TRL release a script or notebook is judged as: given, pinned by its repository, its own install line, or
the trl range of the Unsloth it imports."""

from __future__ import annotations

from typing import Any

from grpo_schema.dialects.python.calls import ModuleReading
from grpo_schema.dialects.python.source import Source, install_pins, unsloth_release_pin


def script_release(source: Source, module: ModuleReading | None, options: dict[str, Any], path: str) -> dict[str, str]:
    """The release to judge by: a flag or `# grpo:` comment, else a pin of the repository (a lock file's release
    first), else the file's own install line (`!pip install trl==0.22.2`, a PEP 723 header), else Unsloth's trl
    range when the file imports unsloth, else the installed trl, else 1.16. A script or notebook runs where its
    repository or its install line puts trl (a Colab, a cluster), seldom in the environment that checks it: those
    come before the installed trl."""
    given, given_source = options.get("trl_version"), options.get("trl_version_source")
    if given is None:
        from grpo_schema.engine.infile import judged_release

        found = judged_release(None, None, None, None if path.startswith("<") else path)
        given, given_source = found["trl_version"], found["trl_version_source"]
    if given_source in ("flag", "context", "form", "comment", "requirements"):
        return {"trl_version": given, "trl_version_source": given_source}
    if given_source == "installed" and _on_disk(path):
        from grpo_schema.versions.detect import pinned_version

        pinned = pinned_version(path)
        if pinned is not None:
            return {"trl_version": pinned[0], "trl_version_source": "requirements"}
    from grpo_schema.versions.detect import resolve_specifier

    for pin in install_pins(source.raw):
        version = resolve_specifier(pin.spec)
        if version is not None:
            return {"trl_version": version, "trl_version_source": f"the file's install line: trl{pin.spec}"}
    if module is not None and module.imports_unsloth:
        from grpo_schema.engine.profiles.unsloth import TRL_RANGE, trl_range_of

        dated = unsloth_release_pin(source.raw)
        spec = trl_range_of(*dated) if dated else TRL_RANGE
        version = resolve_specifier(spec) if spec else None
        if version is not None and given_source in ("default", "installed", None):
            what = f"unsloth=={dated[0]}.{dated[1]}" if dated else "unsloth"
            return {"trl_version": version, "trl_version_source": f"the trl range {what} requires: trl{spec}"}
    return {"trl_version": given, "trl_version_source": given_source or "default"}


def _on_disk(path: str) -> bool:
    from pathlib import Path

    try:
        return not path.startswith("<") and Path(path).is_file()
    except (OSError, ValueError):
        return False
