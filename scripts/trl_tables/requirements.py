"""requirements.json: what each release's wheel declares (install_requires, extras, console scripts)."""

from __future__ import annotations

import re
import zipfile
from typing import Any

from trl_tables.output import dump
from trl_tables.releases import RELEASES, vkey
from trl_tables.wheels import wheel

_EXTRA_MARKER = re.compile(r"""\s*(?:and\s+)?extra\s*==\s*["']([^"']+)["']\s*(?:and\s+)?""")


def _strip_extra(marker: str) -> tuple[str | None, str]:
    """('vllm', 'python_version < "3.13"') from 'python_version < "3.13" and extra == "vllm"'."""
    m = _EXTRA_MARKER.search(marker)
    if m is None:
        return None, marker.strip()
    rest = (marker[: m.start()] + " " + marker[m.end() :]).strip()
    rest = re.sub(r"^\s*and\s+|\s+and\s*$", "", rest).strip()
    return m.group(1), rest


def release_requirements(version: str, offline: bool) -> dict[str, Any]:
    """What one release's wheel declares: install_requires, extras, console scripts, `trl vllm-serve`."""
    with zipfile.ZipFile(wheel("trl", version, offline)) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta_name).decode("utf-8")
        ep_name = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
        entry_points = zf.read(ep_name).decode("utf-8") if ep_name else ""
        vllm_serve = "trl/scripts/vllm_serve.py" in names
    requires: list[str] = []
    extras: dict[str, list[str]] = {}
    python = None
    for line in metadata.split("\n\n", 1)[0].splitlines():
        if line.startswith("Requires-Python:"):
            python = line.split(":", 1)[1].strip()
        if line.startswith("Provides-Extra:"):
            extras.setdefault(line.split(":", 1)[1].strip(), [])
        if not line.startswith("Requires-Dist:"):
            continue
        text = line.split(":", 1)[1].strip()
        req, _, marker = text.partition(";")
        extra, marker = _strip_extra(marker)
        entry = req.strip().replace(" ", "") + (f"; {marker}" if marker else "")
        if extra is None:
            requires.append(entry)
        else:
            extras.setdefault(extra, []).append(entry)
    scripts: list[str] = []
    section = ""
    for line in entry_points.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "console_scripts" and "=" in line:
            scripts.append(line.split("=", 1)[0].strip())
    return {
        "requires": requires,
        "extras": {k: extras[k] for k in sorted(extras) if k != "dev"},
        "requires_python": python,
        "console_scripts": sorted(scripts),
        "vllm_serve": vllm_serve,
    }


def requirements_file(offline: bool) -> str:
    return dump(
        {
            "format": 1,
            "source": "each release's wheel METADATA and entry_points.txt",
            "releases": {v: release_requirements(v, offline) for v in sorted(RELEASES, key=vkey)},
        }
    )
