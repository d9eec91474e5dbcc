#!/usr/bin/env python3
"""Write grpo_schema/doctor/vllm_requirements.json: what each vLLM release's Linux x86_64 wheel requires of torch and
transformers (its unconditional Requires-Dist), read from the wheel's METADATA on PyPI.

    python scripts/vllm_requirements.py            # reads the package index (network); writes the table
    python scripts/vllm_requirements.py --check    # the same, exit 1 when the committed table differs

vLLM pins torch exactly (0.8.5 needs torch==2.6.0), so a requirements file that pins vLLM and leaves torch to pip
gets that torch: `grpo doctor` judges it from this table, with no network at run time. Only the wheel's zip
directory and its METADATA member are read (HTTP range requests), never the whole wheel.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "grpo_schema" / "doctor" / "vllm_requirements.json"
INDEX = "https://pypi.org/simple/vllm/"
FIRST = (0, 7)  # the first vLLM minor a TRL GRPO release generates with (TRL 0.14's day)
PACKAGES = ("torch", "transformers")


class RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests, seekable, for zipfile (which reads the end, then one member)."""

    def __init__(self, url: str, size: int):
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end - 1}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
        self.pos += len(data)
        return data

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def releases() -> list[dict]:
    """The index's x86_64 Linux wheel of each final vLLM release from FIRST on, oldest first."""
    request = urllib.request.Request(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        files = json.load(response)["files"]
    out: dict[str, dict] = {}
    for entry in files:
        m = re.fullmatch(r"vllm-(?P<v>\d+(?:\.\d+)+(?:\.post\d+)?)-[^-]+-[^-]+-(?P<plat>[^-]+)\.whl", entry["filename"])
        if m is None or "x86_64" not in m["plat"] or entry.get("yanked"):
            continue
        key = _key(m["v"])
        if key[:2] >= FIRST:
            out.setdefault(m["v"], entry)
    return [out[v] for v in sorted(out, key=_key)]


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def requires(entry: dict) -> dict[str, str]:
    """{package: requirement} for PACKAGES from the wheel's METADATA (unconditional lines only)."""
    with zipfile.ZipFile(RangeFile(entry["url"], entry["size"])) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(name).decode("utf-8")
    out: dict[str, str] = {}
    for line in metadata.split("\n\n", 1)[0].splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        text = line.split(":", 1)[1].strip()
        requirement, _, marker = text.partition(";")
        package = re.split(r"[\s\[<>=!~(]", requirement.strip(), maxsplit=1)[0].lower()
        if package in PACKAGES and "extra" not in marker and package not in out:
            out[package] = re.sub(r"[\s()]", "", requirement[len(package) :]) or ""
    return out


def table() -> str:
    rows = {}
    for entry in releases():
        version = re.match(r"vllm-([^-]+)-", entry["filename"]).group(1)
        rows[version] = {"wheel": entry["filename"], "sha256": entry["hashes"]["sha256"], **requires(entry)}
        print(version, rows[version].get("torch"), rows[version].get("transformers"), file=sys.stderr)
    data = {
        "format": 1,
        "source": "each vLLM release's Linux x86_64 wheel METADATA (Requires-Dist without an extra) on PyPI, "
        "read by scripts/vllm_requirements.py",
        "releases": rows,
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed table differs")
    args = parser.parse_args()
    text = table()
    if args.check:
        same = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
        print(f"{TABLE.relative_to(ROOT)}: {'up to date' if same else 'stale'}")
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
