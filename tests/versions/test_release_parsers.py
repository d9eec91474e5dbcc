"""Oracle: real TRL releases' own `trl grpo` parsers against the per-release tables (marker `trl_release`).

Each release runs in its own venv, .venv-trl/<release> (scripts/trl-release-venvs.sh builds them), on the real
configs in ../shared/grpo-corpus/valid. Recorded per file: the verdict (parses, or the error), the keys the parser
does not know, and the values of the keys the file leaves out. Compared with the tables: the unknown keys must be
exactly the keys the table does not list; the parser's defaults must be the table's. A summary per release goes to
test-artifacts/trl-release-oracle/<release>.json.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from grpo_schema.versions import surface

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "grpo-corpus" / "valid"
CHILD = Path(__file__).with_name("release_parser_child.py")
RELEASES = ["0.16.1", "0.19.1", "0.23.1", "0.29.1", "1.8.0", "1.16.0"]

# The parser's default where it is not the dataclass default the table records: HfArgumentParser gives a field
# typed as a list (`debug: str | list[DebugOption] = ""`) nargs="+" and no default of its own.
PARSER_DEFAULT_DIFFERENCES = {"debug": ("", None)}

pytestmark = pytest.mark.trl_release


def run_release(release: str, tmp_path: Path) -> dict:
    python = ROOT / ".venv-trl" / release / "bin" / "python"
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent (the shared corpus sits beside the project)")
    if not python.exists():
        pytest.skip(f".venv-trl/{release} is absent (scripts/trl-release-venvs.sh {release})")
    out = tmp_path / f"{release}.json"
    files = sorted(str(p) for p in CORPUS.glob("*.yaml"))
    proc = subprocess.run([str(python), str(CHILD), str(out), *files], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("release", RELEASES)
def test_release_parser_agrees_with_its_table(release, tmp_path):
    result = run_release(release, tmp_path)
    assert result["release"] == release
    table = surface(release)
    summary: dict = {"release": release, "transformers": result["transformers"], "table": table.release,
                     "table_transformers": table.transformers, "files": len(result["files"])}

    # the key set and the parser's defaults
    parser_defaults = result["parser_defaults"]
    assert sorted(set(parser_defaults) ^ set(table.fields)) == []
    differing = {}
    for name, value in parser_defaults.items():
        field = table.fields[name]
        if field.required or field.default_expr:
            continue
        if value != field.default or type(value) is not type(field.default):
            differing[name] = (field.default, value)
    summary["parser_defaults_equal"] = f"{len(parser_defaults) - len(differing)}/{len(parser_defaults)}"
    summary["parser_defaults_differing"] = differing

    # per file: the unknown keys, the verdict, the values of keys left out
    unknown_agree, defaults_agree, parses, rewritten, compared = 0, 0, 0, {}, 0
    mismatched = {}
    for path, entry in sorted(result["files"].items()):
        config = yaml.safe_load(Path(path).read_text()) or {}
        predicted = sorted(table.unknown(k for k in config if k != "env"))
        if predicted == entry["unknown"]:
            unknown_agree += 1
        else:
            mismatched[Path(path).name] = {"table": predicted, "release": entry["unknown"]}
        if entry["verdict"] == "parses":
            parses += 1
            off = [n for n, v in entry["parsed"].items()
                   if n in table.fields and not table.fields[n].post_init and not table.fields[n].default_expr
                   and v != table.fields[n].default]
            compared += sum(1 for n in entry["parsed"] if n in table.fields and not table.fields[n].post_init
                            and not table.fields[n].default_expr)
            for n in off:
                rewritten[n] = rewritten.get(n, 0) + 1
            defaults_agree += not off
    summary.update({
        "unknown_keys_equal": f"{unknown_agree}/{len(result['files'])}",
        "unknown_keys_mismatched": mismatched,
        "parse_at_world_size_1": f"{parses}/{len(result['files'])}",
        "verdicts": {Path(p).name: e["verdict"][:200] for p, e in sorted(result["files"].items())},
        # files that parse and whose every left-out key has the table's default; the rest differ only in keys
        # TrainingArguments.__post_init__ fills in (output_dir, logging_dir, accelerator_config, ...), listed here
        "parsed_defaults_equal": f"{defaults_agree}/{parses}",
        "left_out_values_equal": f"{compared - sum(rewritten.values())}/{compared}",
        "rewritten_after_parsing": dict(sorted(rewritten.items())),
    })
    artifacts = ROOT / "test-artifacts" / "trl-release-oracle"
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / f"{release}.json").write_text(json.dumps(summary, indent=1, sort_keys=True, default=repr) + "\n")
    print(json.dumps({k: summary[k] for k in ("release", "unknown_keys_equal", "parser_defaults_equal",
                                               "parse_at_world_size_1", "left_out_values_equal")}))

    assert mismatched == {}
    assert differing == {k: v for k, v in PARSER_DEFAULT_DIFFERENCES.items() if k in parser_defaults}


# What a release's parser stops on: keys it does not read (unknown, a downstream script's, launch keys before 0.29,
# old names it no longer reads, 1.16's newer keys), a string its types refuse, and, from 0.18, the batch geometry.
PARSE_TIME = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K004", "GRPO-K006", "GRPO-K009", "GRPO-K010", "GRPO-T013",
              "GRPO-T005"}
NOT_READ = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K006", "GRPO-K009", "GRPO-K010"}


@pytest.mark.parametrize("release", RELEASES)
def test_grpo_validate_gives_the_release_parsers_verdict_and_unknown_keys(release, tmp_path):
    """`grpo validate --trl-version R` against R's own parser, file by file (at world size 1, as the parser runs):
    the same verdict (parses / stops), and the same keys it does not read."""
    from grpo_schema import check_file
    from grpo_schema.engine.keys import is_launch_key

    result = run_release(release, tmp_path)
    table = surface(release)
    geometry = {"GRPO-B001", "GRPO-B004"} if table.front_end.batch_divisibility_at_parse else set()
    verdicts, unknown = {}, {}
    launcher = table.front_end.unknown_keys == "accelerate"
    for path, entry in sorted(result["files"].items()):
        checked = check_file(path, trl_version=release, world_size=1)
        stops = [d.code for d in checked.diagnostics if d.severity == "error" and d.code in PARSE_TIME | geometry]
        ours = "parses" if not stops else "stops"
        if launcher:  # from 0.29 `trl grpo` hands the keys its parser leaves to `accelerate launch`, which takes
            # its own options and exits on the rest
            entry = {**entry, "unknown": [k for k in entry["unknown"] if not is_launch_key(k)]}
        theirs = "parses" if entry["verdict"] == "parses" and not (launcher and entry["unknown"]) else "stops"
        if ours != theirs:
            verdicts[Path(path).name] = (ours, stops, entry["verdict"][:200])
        not_read = sorted({f for d in checked.diagnostics if d.code in NOT_READ for f in d.fields})
        if not_read != entry["unknown"]:
            unknown[Path(path).name] = (not_read, entry["unknown"])
    print(f"{release}: verdicts agree on {len(result['files']) - len(verdicts)}/{len(result['files'])}, "
          f"unknown keys on {len(result['files']) - len(unknown)}/{len(result['files'])}")
    assert verdicts == {}
    assert unknown == {}
