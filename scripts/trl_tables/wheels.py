"""The wheel cache: a release's wheel (downloaded when missing) and the source files read out of it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("TRL_WHEEL_CACHE", "/tmp/trl-wheels"))


def wheel(package: str, version: str, offline: bool) -> Path:
    folder = CACHE if package == "trl" else CACHE / package
    path = folder / f"{package}-{version}-py3-none-any.whl"
    if not path.exists():
        if offline:
            raise SystemExit(f"{path} is not cached (run without --offline to download it)")
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary",
                ":all:",
                f"{package}=={version}",
                "-d",
                str(folder),
            ],
            check=True,
        )
    return path


def read_sources(path: Path, names: tuple[str, ...]) -> tuple[dict[str, str], str]:
    """The named files' text (those present) and the wheel's build date (newest zip entry)."""
    with zipfile.ZipFile(path) as zf:
        present = set(zf.namelist())
        texts = {n: zf.read(n).decode("utf-8") for n in names if n in present}
        cli = sorted(n for n in present if n == "trl/cli.py" or (n.startswith("trl/cli/") and n.endswith(".py")))
        texts.update({n: zf.read(n).decode("utf-8") for n in cli})
        date = max(i.date_time for i in zf.infolist())
    return texts, "%04d-%02d-%02d" % date[:3]
