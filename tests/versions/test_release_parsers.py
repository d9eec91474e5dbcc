"""Oracle: real TRL releases' own `trl grpo` parsers against the per-release tables and `grpo validate
--trl-version R` (marker `trl_release`).

Each release runs in its own venv, .venv-trl/<release> (scripts/trl-release-venvs.sh builds them; TRL 1.16.0 is
the main .venv's own), on the real configs in ../shared/grpo-corpus/valid and the realistic mistakes in ../shared/grpo-corpus/invalid
(when that folder is there; the mistakes are judged for verdict and unknown keys only) and on
seeded random configs drawn from the release's table (random_configs.py: its keys with valid and invalid values,
other releases' keys, keys nobody reads, batch geometries that do and do not divide). Per file the release's parser
gives its verdict (parses, or the error), the keys it does not know, the values of the keys the file leaves out and
the values its GRPO config derives. grpo must give the same verdict, the same unknown keys and the same derived
values; the table must give the parser's defaults. A summary per release goes to
test-artifacts/trl-release-oracle/<release>.json.

Under CI (CI=true) a release environment scripts/test.sh builds must be there: a missing one fails the test rather
than skipping it, so that a broken build is noticed (SKIP_TRL_RELEASES=1 skips them on purpose).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from grpo_schema.versions import surface
from tests.support.artifacts import ARTIFACTS, merge_json
from tests.support.release_envs import BUILT_BY_TEST_SH, MAIN_VENV_RELEASE, interpreter, missing
from tests.versions.random_configs import generate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "grpo-corpus" / "valid"
MISTAKES = ROOT.parent / "shared" / "grpo-corpus" / "invalid"
CHILD = Path(__file__).with_name("release_parser_child.py")
RELEASES = ["0.16.1", "0.19.1", "0.23.1", "0.29.1", "1.8.0", "1.16.0"]
RANDOM_CONFIGS = int(os.environ.get("GRPO_ORACLE_RANDOM", "300"))
RANDOM_SEED = int(os.environ.get("GRPO_ORACLE_SEED", "0"))

# The parser's default where it is not the dataclass default the table records: HfArgumentParser gives a field
# typed as a list (`debug: str | list[DebugOption] = ""`) nargs="+" and no default of its own.
PARSER_DEFAULT_DIFFERENCES = {"debug": ("", None)}
# TrainingArguments fields whose value after parsing is not the dataclass default the table records: its
# __post_init__ fills them in from other fields or the machine (none of them is a GRPO setting grpo judges by).
NORMALISED_AFTER_PARSING = {
    "accelerator_config": "None becomes an AcceleratorConfig object",
    "dataloader_pin_memory": "switched off on a machine without an accelerator",
    "debug": "'' becomes a list of DebugOption",
    "disable_tqdm": "None becomes a choice from the log level",
    "fsdp": "'' becomes a list of FSDPOption",
    "fsdp_config": "None becomes a dict of FSDP defaults",
    "local_rank": "read from the LOCAL_RANK environment variable",
    "logging_dir": "None becomes output_dir/runs/<time>_<host>",
    "run_name": "None becomes output_dir",
    "report_to": "None becomes every installed integration (transformers 4.x)",
    "greater_is_better": "None becomes a choice from metric_for_best_model",
    "do_eval": "switched on when eval_strategy is not 'no'",
    "eval_strategy": "set from evaluation_strategy, its old name, which the file wrote (transformers 4.x)",
    "average_tokens_across_devices": "switched off when there is one process (transformers 4.56)",
    "warmup_steps": "set from warmup_ratio, its deprecated form, where the file wrote that (transformers 5.0-5.14)",
    "activation_checkpointing": "set from gradient_checkpointing, its deprecated alias (TRL 1.x)",
    "activation_checkpointing_kwargs": "set from gradient_checkpointing_kwargs, its deprecated alias (TRL 1.x)",
}

pytestmark = pytest.mark.trl_release


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """release -> {"result": the child's output, "corpus": [paths], "random": [paths]}; each release's parser runs
    once per module, on the corpus and the random configs together."""
    runs: dict[str, dict] = {}

    def run(release: str) -> dict:
        if release in runs:
            return runs[release]
        python = interpreter(release)
        if python is None:
            missing(release)
        folder = tmp_path_factory.mktemp(f"oracle-{release}")
        random_paths = []
        for i, config in enumerate(generate(release, RANDOM_CONFIGS, RANDOM_SEED)):
            path = folder / f"random-{i:04d}.yaml"
            path.write_text(yaml.safe_dump(config, sort_keys=False))
            random_paths.append(str(path))
        corpus = sorted(str(p) for p in CORPUS.glob("*.yaml")) if CORPUS.is_dir() else []
        mistakes = readable_mistakes()
        out = folder / "result.json"
        proc = subprocess.run(
            [str(python), str(CHILD), str(out), *corpus, *mistakes, *random_paths],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[release] = {
            "result": json.loads(out.read_text()),
            "corpus": corpus,
            "random": random_paths,
            "mistakes": mistakes,
        }
        assert runs[release]["result"]["release"] == release
        return runs[release]

    return run


def readable_mistakes() -> list[str]:
    """The corpus's mistakes whose YAML is a mapping: the others (tabs, a list, an alias bomb, an empty file) grpo
    refuses as YAML (GRPO-Y*), and no release's parser gets a mapping to read from them."""
    if not MISTAKES.is_dir():
        return []
    out = []
    for path in sorted(MISTAKES.glob("*.yaml")):
        try:
            loaded = yaml.load(path.read_text(), Loader=NoAliases)
        except yaml.YAMLError:
            continue
        if isinstance(loaded, dict):
            out.append(str(path))
    return out


class NoAliases(yaml.SafeLoader):
    """A file with more than 20 aliases is not handed to a release's parser (it would expand a billion laughs)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases = getattr(self, "aliases", 0) + 1
            if self.aliases > 20:
                raise yaml.YAMLError("too many aliases")
        return super().compose_node(parent, index)


def write_summary(release: str, **values) -> None:
    """The release's summary file gains `values` (each of three tests adds its own, maybe from another worker)."""
    merge_json(
        ARTIFACTS / "trl-release-oracle" / f"{release}.json",
        {**values, "release": release},
        indent=1,
        sort_keys=True,
        default=repr,
    )


def config_of(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text()) or {}


@pytest.mark.parametrize("release", RELEASES)
def test_release_parser_agrees_with_its_table(release, oracle):
    run = oracle(release)
    result = run["result"]
    table = surface(release)

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

    # per file: the unknown keys, and the values of the keys left out
    unknown_agree, parses, compared, rewritten, mismatched = 0, 0, 0, {}, {}
    for path, entry in sorted(result["files"].items()):
        predicted = sorted(table.unknown(k for k in config_of(path) if k != "env"))
        if predicted == entry["unknown"]:
            unknown_agree += 1
        else:
            mismatched[Path(path).name] = {"table": predicted, "release": entry["unknown"]}
        if entry["verdict"] != "parses" or path in run["mistakes"]:  # the values of real configs only
            continue
        parses += 1
        for name, value in entry["parsed"].items():
            field = table.fields.get(name)
            if field is None or field.post_init or field.default_expr:
                continue
            compared += 1
            if value != field.default:
                rewritten.setdefault(name, []).append(Path(path).name)
    unexplained = {n: files[:3] for n, files in rewritten.items() if n not in NORMALISED_AFTER_PARSING}
    left_out_equal = compared - sum(len(files) for files in rewritten.values())
    files = len(result["files"])
    write_summary(
        release,
        transformers=result["transformers"],
        table=table.release,
        table_transformers=table.transformers,
        files=files,
        corpus_files=len(run["corpus"]),
        random_files=len(run["random"]),
        random_seed=RANDOM_SEED,
        parser_defaults_equal=f"{len(parser_defaults) - len(differing)}/{len(parser_defaults)}",
        parser_defaults_differing=differing,
        unknown_keys_equal=f"{unknown_agree}/{files}",
        unknown_keys_mismatched=mismatched,
        parse_at_world_size_1=f"{parses}/{files}",
        left_out_values_equal=f"{left_out_equal}/{compared}",
        rewritten_after_parsing={n: len(f) for n, f in sorted(rewritten.items())},
        rewritten_unexplained=unexplained,
    )
    print(f"{release}: unknown keys {unknown_agree}/{files}, left-out values {left_out_equal}/{compared}")

    assert mismatched == {}
    assert differing == {k: v for k, v in PARSER_DEFAULT_DIFFERENCES.items() if k in parser_defaults}
    # every left-out key has the table's default after parsing, but for the fields __post_init__ fills in
    assert unexplained == {}
    assert parses > 0 and compared > 0


# What a release's parser stops on: keys it does not read (unknown, a downstream script's, launch keys before 0.29,
# old names it no longer reads, 1.16's newer keys), a string its types refuse, a fractional save/logging/eval step
# count above 1 (TrainingArguments), and, from 0.18, the batch geometry (GEOMETRY_AT_PARSE).
PARSE_TIME = {
    "GRPO-K001",
    "GRPO-K002",
    "GRPO-K003",
    "GRPO-K004",
    "GRPO-K006",
    "GRPO-K009",
    "GRPO-K010",
    "GRPO-T013",
    "GRPO-T005",
    "GRPO-O002",
}
# whole groups per generation and per eval batch, generation_batch_size with steps_per_generation, a generation
# batch that is not a whole number of micro-batches
ENUM_TYPES = re.compile(r"SchedulerType|IntervalStrategy|SaveStrategy|HubStrategy|OptimizerNames")
GEOMETRY_AT_PARSE = {"GRPO-B001", "GRPO-B002", "GRPO-B003", "GRPO-B004", "GRPO-B005"}
# Raised when the dataclasses are built, in every release: TrainingArguments refuses fp16 with bf16, TrlParser an
# `env` that is not a mapping; GRPOConfig refuses a hub repo for completions without log_completions and an
# importance-sampling clip range whose minimum is not below its maximum (where it reads those keys at all).
ALWAYS_AT_PARSE = {"GRPO-P001", "GRPO-E001", "GRPO-O001", "GRPO-I001"}
# 0.18-0.19's GRPOConfig divides by per_device_train_batch_size x processes whatever else is set (later releases
# only when generation_batch_size is given): a batch of 0 stops the parser on ZeroDivisionError.
DIVIDES_BY_THE_BATCH = ("0.18", "0.19")
NOT_READ = {"GRPO-K001", "GRPO-K002", "GRPO-K003", "GRPO-K006", "GRPO-K009", "GRPO-K010", "GRPO-K011"}
# A TrainingArguments key only some of the transformers the release accepts read (a warning): each release's venv
# has its table's transformers; where that one does not read the key (it is not in the table), it is a key the
# parser does not read, and stops on where the release's front end stops on those (0.19-0.21, 0.29 on); where it
# reads it (a later transformers removed it), the parser reads it.
WITH_THE_TABLES_TRANSFORMERS = {"GRPO-K011"}


def not_read_by_the_table(diagnostics, table) -> list[str]:
    """The keys grpo reports as not read by the release with its table's transformers."""
    found = set()
    for d in diagnostics:
        if d.code in NOT_READ and not (d.code in WITH_THE_TABLES_TRANSFORMERS and d.fields[0] in table.fields):
            found.update(d.fields)
    return sorted(found)


def stops_at_parse(diagnostics, config: dict, table) -> list[str]:
    """The codes of grpo's errors that the release's parser would stop on."""
    from grpo_schema.engine.release_reading import front_end_verdict

    geometry = GEOMETRY_AT_PARSE if table.front_end.batch_divisibility_at_parse else set()
    out = []
    for d in diagnostics:
        if d.code in WITH_THE_TABLES_TRANSFORMERS:
            if d.fields[0] not in table.fields and front_end_verdict(table)[0]:
                out.append(d.code)
            continue
        if d.severity != "error":
            continue
        # TRL 1.16's own tables report a string its argparse types refuse as a type error (T001), as for any
        # value of the wrong type; the parser converts only strings, so only these stop it
        converted = d.code == "GRPO-T001" and d.fields and isinstance(config.get(d.fields[0]), str)
        # TrainingArguments turns its enum-typed choices (lr_scheduler_type, *_strategy, optim) into their enums
        # when parsed, so an unknown one stops the parser; GRPOConfig's choices wait for the trainer
        field = table.fields.get(d.fields[0]) if d.fields else None
        enum = d.code == "GRPO-T003" and field is not None and ENUM_TYPES.search(field.annotation or "")
        # fewer than 2 generations per prompt (a boolean counts as 0 or 1) or a fraction that divides nothing is
        # refused with the batch geometry
        single = d.code in ("GRPO-T001", "GRPO-T002") and d.fields == ("num_generations",) and geometry
        zero_batch = (
            d.code == "GRPO-T002"
            and d.fields == ("per_device_train_batch_size",)
            and config.get("per_device_train_batch_size") == 0
            and table.release.startswith(DIVIDES_BY_THE_BATCH)
        )
        if d.code in PARSE_TIME | geometry | ALWAYS_AT_PARSE or converted or enum or single or zero_batch:
            out.append(d.code)
    return out


@pytest.mark.parametrize("release", RELEASES)
def test_grpo_validate_gives_the_release_parsers_verdict_and_unknown_keys(release, oracle):
    """`grpo validate --trl-version R` against R's own parser, file by file (at world size 1, as the parser runs):
    the same verdict (parses / stops), and the same keys it does not read."""
    from grpo_schema import check_file
    from grpo_schema.engine.keys import is_launch_key

    run = oracle(release)
    result = run["result"]
    table = surface(release)
    verdicts, unknown = {}, {}
    launcher = table.front_end.unknown_keys == "accelerate"
    for path, entry in sorted(result["files"].items()):
        config = config_of(path)
        checked = check_file(path, trl_version=release, world_size=1)
        stops = stops_at_parse(checked.diagnostics, config, table)
        ours = "parses" if not stops else "stops"
        if launcher:  # from 0.29 `trl grpo` hands the keys its parser leaves to `accelerate launch`, which takes
            # its own options and exits on the rest
            entry = {**entry, "unknown": [k for k in entry["unknown"] if not is_launch_key(k)]}
        theirs = "parses" if entry["verdict"] == "parses" and not (launcher and entry["unknown"]) else "stops"
        if ours != theirs:
            verdicts[Path(path).name] = (ours, stops, entry["verdict"][:200])
        not_read = not_read_by_the_table(checked.diagnostics, table)
        if not_read != entry["unknown"]:
            unknown[Path(path).name] = (not_read, entry["unknown"])
    files = len(result["files"])
    random_names = {Path(p).name for p in run["random"]}
    write_summary(
        release,
        verdicts_equal=f"{files - len(verdicts)}/{files}",
        verdicts_equal_random=f"{len(random_names) - len(random_names & set(verdicts))}/{len(random_names)}",
        verdicts_differing=verdicts,
        unknown_reported_equal=f"{files - len(unknown)}/{files}",
        unknown_reported_differing=unknown,
    )
    print(
        f"{release}: verdicts agree on {files - len(verdicts)}/{files}, unknown keys on {files - len(unknown)}/{files}"
    )
    assert verdicts == {}
    assert unknown == {}


def grpo_value(result, name: str):
    """What grpo says the release's GRPO config holds for `name` after parsing, in the release's own terms."""
    if name in ("generation_batch_size", "steps_per_generation"):
        return getattr(result.plan, name)
    return getattr(result.config, name)


def same(name: str, theirs, ours) -> bool:
    if name == "scale_rewards" and isinstance(theirs, bool):  # up to 0.21: a boolean; grpo says it in 1.16's words
        theirs = "group" if theirs else "none"
    if name == "top_k" and theirs is None:  # before 1.x None meant no top-k filtering, which 1.16 writes 0
        theirs = 0
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return type(theirs) is type(ours) and theirs == ours
    if isinstance(theirs, (int, float)) and isinstance(ours, (int, float)):
        return abs(theirs - ours) <= 1e-9 * max(1.0, abs(theirs))
    return theirs == ours


# Derived values grpo does not model as the release does (each with the reason), compared for the rest.
NOT_COMPARED = {
    "bf16": "a None left by the file becomes `not fp16` in the release; grpo keeps 1.16's None (auto)",
    "max_prompt_length": "a release-only key: 1.16's config has no such field; grpo type-checks it as the release",
}


@pytest.mark.parametrize("release", RELEASES)
def test_grpo_derives_what_the_release_parser_derives(release, oracle):
    """For every file the release parses: the values its GRPO config computes or normalises when parsed (the
    generation batch and steps per generation where the release has them, and the defaults of loss_type, beta,
    scale_rewards, temperature, ... a file leaves out) equal grpo's for that release."""
    from grpo_schema import check_file

    run = oracle(release)
    differing: dict[str, list] = {}
    compared = agreeing = 0
    for path, entry in sorted(run["result"]["files"].items()):
        if entry["verdict"] != "parses" or path in run["mistakes"]:  # the values of real configs only
            continue
        checked = check_file(path, trl_version=release, world_size=1)
        plan_names = {"generation_batch_size", "steps_per_generation"} & set(entry["derived"])
        if checked.config is None or checked.plan is None and plan_names:  # the release computed a schedule
            differing.setdefault("<no plan>", []).append(Path(path).name)
            continue
        refused = {f for d in checked.diagnostics if d.severity == "error" for f in d.fields}
        for name, theirs in entry["derived"].items():
            if name in NOT_COMPARED or not hasattr(checked.config, name) and name not in plan_names:
                continue
            if name in refused:  # grpo refuses the value (loss_type: bogus), which the release keeps until its
                continue  # trainer starts: grpo's config then holds the default, nothing to compare
            compared += 1
            ours = grpo_value(checked, name)
            if same(name, theirs, ours):
                agreeing += 1
            else:
                differing.setdefault(name, []).append((Path(path).name, theirs, ours))
    write_summary(
        release,
        derived_values_equal=f"{agreeing}/{compared}",
        derived_values_differing={n: v[:5] for n, v in differing.items()},
    )
    print(f"{release}: derived values agree {agreeing}/{compared}")
    assert compared > 0
    assert differing == {}


def test_the_oracle_expects_what_scripts_build():
    """The releases scripts/test.sh builds (trl-release-venvs.sh's default) are the ones the oracle fails without
    under CI, and each is one the oracle runs."""
    script = (ROOT / "scripts" / "trl-release-venvs.sh").read_text()
    default = re.search(r"\|\| releases=\(([^)]*)\)", script)
    assert default is not None
    assert tuple(default.group(1).split()) == BUILT_BY_TEST_SH
    assert set(BUILT_BY_TEST_SH) | {MAIN_VENV_RELEASE} <= set(RELEASES)


def test_a_missing_release_environment_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("SKIP_TRL_RELEASES", raising=False)
    with pytest.raises(pytest.fail.Exception, match="build failed"):
        missing("0.19.1")
    with pytest.raises(pytest.skip.Exception):
        missing("0.29.1")  # not built by scripts/test.sh: skipped
    monkeypatch.setenv("SKIP_TRL_RELEASES", "1")
    with pytest.raises(pytest.skip.Exception):
        missing("0.19.1")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        missing("0.19.1")
