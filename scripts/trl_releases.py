#!/usr/bin/env python3
"""Regenerate grpo_schema/versions/releases/*.json: the `trl grpo --config` surface of each TRL release.

For every TRL release since GRPOTrainer appeared (0.14.0), this reads the released wheel's source with `ast`
(never importing trl or transformers): GRPOConfig (with its TRL base classes), the script-arguments class `trl grpo`
builds its parser from (GRPOScriptArguments or ScriptArguments), ModelConfig and, where the release has it,
DatasetMixtureConfig; and TrainingArguments from the transformers wheel of that release's date (trl_tables/releases.py:
the newest transformers uploaded before the TRL wheel). The fields are
merged the way HfArgumentParser merges them (TrainingArguments, then GRPOConfig's overrides; the other dataclasses
beside it), and the release's front end (cli.py / cli/) and script (scripts/grpo.py) are read for what they do
with keys they do not know.

Usage:
    python scripts/trl_releases.py                # download what is missing into the cache, write the tables
    python scripts/trl_releases.py --check        # exit 1 if the committed tables differ from a regeneration
    python scripts/trl_releases.py --offline      # use the cache only (fail if a wheel is missing)
    python scripts/trl_releases.py --only requirements   # only requirements.json (needs the trl wheels only)
    python scripts/trl_releases.py --only trainer        # only trainer.json
    python scripts/trl_releases.py --pairs        # recompute the release/transformers pairs from PyPI; exit 1 if any differ

requirements.json holds, for every release above, what its wheel's METADATA declares (install_requires and each
extra, as requirement strings with the extra's own marker removed), its console scripts and whether it ships the
`trl vllm-serve` script: `grpo doctor` judges an environment against them. trainer.json holds, for every release,
the values of each choice-like field (loss_type, importance_sampling_level, scale_rewards, ...) its trainer accepts,
read from its grpo_trainer.py and grpo_config.py: the checks that refuse any other value; and the keys it warns
are deprecated (its GRPOConfig, trainer and TrainingArguments), with the key it says to use instead; the reward
names its `trl grpo` script resolves without an import (the keys of trl/scripts/grpo.py's reward registry); and its
batch meaning: whether per_device_train_batch_size counts prompts (0.14) or completions, and each divisibility by
num_generations it checks (the product of fields, in the trainer or in GRPOConfig, the evaluation batch's apart).

Wheels are cached in $TRL_WHEEL_CACHE (default /tmp/trl-wheels): trl-*.whl there, transformers-*.whl in
transformers/. The output is deterministic: sorted keys, no timestamps other than the wheels' own build dates.
The reading itself lives in scripts/trl_tables/ (one module per idea); this file is the command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/trl_tables, when run or loaded as a file

from trl_tables.output import comparable, dump
from trl_tables.releases import OUT, RELEASES, check_pairs, vkey
from trl_tables.requirements import requirements_file
from trl_tables.surface import surface
from trl_tables.trainer import source_choices, source_reward_names, trainer_file
from trl_tables.wheels import CACHE

__all__ = ["CACHE", "OUT", "RELEASES", "build", "requirements_file", "source_choices", "source_reward_names", "surface"]


def build(offline: bool) -> dict[str, str]:
    """{file name: content} for every table and the index."""
    files: dict[str, str] = {}
    index: list[dict[str, Any]] = []
    previous: tuple[str, str] | None = None  # (comparable, file)
    for version in sorted(RELEASES, key=vkey):
        table = surface(version, RELEASES[version], offline)
        key = comparable(table)
        if previous is not None and previous[0] == key:
            name = previous[1]
        else:
            name = ".".join(version.split(".")[:2]) + ".json"
            files[name] = dump(table)
            previous = (key, name)
        index.append(
            {
                "release": version,
                "file": name,
                "transformers": table["transformers"],
                "dates": table["dates"],
                "unknown_keys": table["front_end"]["unknown_keys"],
            }
        )
    files["index.json"] = dump({"format": 1, "minimum": "0.14.0", "releases": index})
    files["requirements.json"] = requirements_file(offline)
    files["trainer.json"] = trainer_file(offline)
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed tables; write nothing")
    ap.add_argument("--offline", action="store_true", help="use the wheel cache only")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--only",
        choices=["requirements", "trainer"],
        help="write only requirements.json (trl wheels only) or trainer.json",
    )
    ap.add_argument(
        "--pairs", action="store_true", help="check RELEASES' transformers pairs against PyPI's upload dates"
    )
    args = ap.parse_args()
    if args.pairs:
        return check_pairs()
    if args.only == "trainer":
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "trainer.json").write_text(trainer_file(args.offline))
        print(f"wrote {args.out / 'trainer.json'}")
        return 0
    if args.only == "requirements":
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "requirements.json").write_text(requirements_file(args.offline))
        print(f"wrote {args.out / 'requirements.json'}")
        return 0
    files = build(args.offline or args.check)
    if args.check:
        committed = {p.name: p.read_text() for p in args.out.glob("*.json")}
        if committed != files:
            changed = sorted(set(committed) ^ set(files) | {n for n in files if committed.get(n) != files[n]})
            print("tables differ from a regeneration:", ", ".join(changed))
            return 1
        print(f"{len(files)} files up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("*.json"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (args.out / name).write_text(text)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
