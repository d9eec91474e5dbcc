"""Which TRL releases get a table, and the transformers release each is read with.

The last patch of every minor release since 0.14 (GRPOTrainer's first), each paired with the transformers of its
date: the newest transformers release (by version, pre-releases aside) uploaded to PyPI before that TRL wheel was.
That is what an install made when the release came out got, what its authors tested it with, and what a recipe
pinned to the release most likely runs; a transformers that came later may read other TrainingArguments keys
(warmup_ratio is gone from 5.15), which GRPO-K011 reports for the rest of the range the release accepts. The upload
times (PyPI's JSON API, https://pypi.org/pypi/<package>/json) are noted beside each pair; `--pairs` recomputes the
pairs from that API and says which differ.

One exception, PROJECT_PINS: TRL 1.16.0, the release grpo's own tables are built from, is read with the transformers
the project installs beside it (the test extra's transformers==5.23.0, the trainer's and the oracle's environment):
its date's 5.19.0 lacks activation_checkpointing(_kwargs), which 5.23 adds, and the engine's 1.16 reading has them.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "grpo_schema" / "versions" / "releases"
PROJECT_PINS = {"1.16.0": "5.23.0"}  # read with the project's own transformers (pyproject.toml's test extra)

# TRL release: transformers release              TRL wheel uploaded   transformers wheel uploaded
RELEASES: dict[str, str] = {
    "0.14.0": "4.48.1",  # 2025-01-29                 2025-01-20
    "0.15.2": "4.49.0",  # 2025-02-25                 2025-02-17
    "0.16.1": "4.50.3",  # 2025-04-04                 2025-03-28
    "0.17.0": "4.51.3",  # 2025-04-24                 2025-04-14
    "0.18.2": "4.52.4",  # 2025-06-15                 2025-05-30
    "0.19.1": "4.53.1",  # 2025-07-08                 2025-07-04
    "0.20.0": "4.54.0",  # 2025-07-29                 2025-07-25
    "0.21.0": "4.55.0",  # 2025-08-05 16:51           2025-08-05 16:13
    "0.22.2": "4.56.0",  # 2025-09-03                 2025-08-29
    "0.23.1": "4.56.2",  # 2025-10-02                 2025-09-19
    "0.24.0": "4.57.1",  # 2025-10-16                 2025-10-14
    "0.25.1": "4.57.1",  # 2025-11-12                 2025-10-14
    "0.26.2": "4.57.3",  # 2025-12-18                 2025-11-25
    "0.27.2": "5.0.0",  # 2026-02-03                  2026-01-26
    "0.28.0": "5.1.0",  # 2026-02-10                  2026-02-05
    "0.29.1": "5.3.0",  # 2026-03-20                  2026-03-04
    "1.0.0": "5.4.0",  # 2026-03-30                   2026-03-27
    "1.1.0": "5.5.3",  # 2026-04-12                   2026-04-09
    "1.2.0": "5.5.4",  # 2026-04-17                   2026-04-13
    "1.3.0": "5.6.2",  # 2026-04-26                   2026-04-23
    "1.4.0": "5.8.0",  # 2026-05-08                   2026-05-05
    "1.5.1": "5.9.0",  # 2026-05-27                   2026-05-20
    "1.6.0": "5.11.0",  # 2026-06-11                  2026-06-10
    "1.7.1": "5.13.0",  # 2026-07-04                  2026-07-03
    "1.8.0": "5.13.0",  # 2026-07-09                  2026-07-03
    "1.9.2": "5.14.1",  # 2026-07-28                  2026-07-16
    "1.10.0": "5.15.0",  # 2026-08-13                 2026-08-10
    "1.11.0": "5.16.1",  # 2026-08-26 19:44           2026-08-26 14:48
    "1.12.0": "5.16.1",  # 2026-08-26 19:46           2026-08-26 14:48
    "1.13.0": "5.17.0",  # 2026-09-10                 2026-09-09
    "1.14.2": "5.19.0",  # 2026-10-06 20:29           2026-10-06 16:38
    "1.15.0": "5.19.0",  # 2026-10-08                 2026-10-06
    "1.16.0": "5.23.0",  # 2026-10-15                 (5.19.0, 2026-10-06, by the date rule: PROJECT_PINS)
}


def basis(release: str) -> str:
    """Each table's `transformers_basis`: how its transformers was chosen."""
    return "project pin" if release in PROJECT_PINS else "release date"


def vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def date_pairs(trl_index: dict, transformers_index: dict) -> dict[str, str]:
    """The rule above over PyPI's JSON for trl and transformers ({'releases': {version: [file, ...]}}): for each
    release of RELEASES, the newest transformers (packaging's version order) whose first file was uploaded before
    the TRL release's first wheel."""
    from packaging.version import Version

    def uploaded(files: list[dict], kind: str | None = None) -> str | None:
        times = [f["upload_time_iso_8601"] for f in files if kind is None or f["packagetype"] == kind]
        return min(times) if times else None

    transformers = {
        v: uploaded(files)
        for v, files in transformers_index["releases"].items()
        if files and not Version(v).is_prerelease and not all(f.get("yanked") for f in files)
    }
    pairs = {}
    for release in RELEASES:
        cut = uploaded(trl_index["releases"][release], "bdist_wheel")
        pairs[release] = max((v for v, t in transformers.items() if t is not None and t < cut), key=Version)
    return pairs


def check_pairs() -> int:
    """`--pairs`: recompute the pairs from PyPI's JSON API and print those that differ from RELEASES (exit 1)."""
    import json
    import urllib.request

    def index(package: str) -> dict:
        with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as response:
            return json.load(response)

    pairs = {**date_pairs(index("trl"), index("transformers")), **PROJECT_PINS}
    differing = {r: (RELEASES[r], t) for r, t in pairs.items() if RELEASES[r] != t}
    for release, (ours, date) in differing.items():
        print(f"trl {release}: RELEASES pairs transformers {ours}, the date rule gives {date}")
    print(f"{len(pairs) - len(differing)} of {len(pairs)} pairs follow the date rule (or PROJECT_PINS)")
    return 1 if differing else 0
