"""to_trl(): TRL 1.16's own dataclasses, equal to what `trl grpo`'s parser builds from the same YAML.

TRL's side is its script's own parser (trl.scripts.grpo.make_parser, parse_args_and_config with unknown keys
dropped as the script does). Corpus files are first made runnable by `trl grpo` on this machine the way a user
would: renamed and removed keys migrated, keys of other projects removed, `use_cpu: true` (TRL's bf16 default
probes for a GPU), and a world size at which the batch geometry holds (TRL reads it from the launcher; here it is
patched, as in tests/trl_oracle.py).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from pathlib import Path
from unittest import mock

import pytest
import yaml

from grpo_schema import GRPORunConfig, check_mapping
from grpo_schema.engine.batch_geometry import Geometry, valid_world_sizes
from grpo_schema.engine.yamledit import apply_fix
from tests.conftest import corpus_files

FIXTURES = Path(__file__).parent / "data" / "model_api"
MIGRATED, REMOVED = ("GRPO-K002", "GRPO-K003"), ("GRPO-K001", "GRPO-K006")
BATCH = ("GRPO-B001", "GRPO-B004")


def profiles_of(path: Path) -> tuple[str, ...]:
    return ("open-r1",) if "open-r1" in path.name else ()


def runnable(path: Path) -> tuple[dict, int]:
    """The file's mapping as `trl grpo` can parse it on this machine, and a world size where it is valid."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["use_cpu"] = True
    data.pop("tf32", None)
    result = check_mapping(data, profiles=profiles_of(path), suggest_fixes=False)
    for diag in result.diagnostics:
        if diag.code in MIGRATED and diag.fix:
            data = apply_fix(data, diag.fix)
        elif diag.code in REMOVED:
            data.pop(diag.fields[0], None)
    result = check_mapping(data, profiles=profiles_of(path), suggest_fixes=False)
    if any(d.code == "GRPO-R002" for d in result.diagnostics):  # another project's reward names (TRL's parser
        data["reward_funcs"] = [_known_reward(name, path) for name in data["reward_funcs"]]  # keeps strings only)
        result = check_mapping(data, profiles=profiles_of(path), suggest_fixes=False)
    world_size = result.world_size
    if any(d.code in BATCH for d in result.diagnostics):
        sizes = valid_world_sizes(Geometry.of(result.config))
        if not sizes:
            pytest.skip(f"{path.name}: no world size up to 64 holds its batch geometry")
        world_size = sizes[0]
        result = check_mapping(data, world_size=world_size, profiles=profiles_of(path), suggest_fixes=False)
    left = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    if left:
        pytest.skip(f"{path.name}: not runnable by `trl grpo` as written either: {left}")
    return data, world_size


def _known_reward(name: str, path: Path) -> str:
    from grpo_schema.engine.check import TRL_REWARD_FUNCS
    from grpo_schema.engine.profiles import get_profile

    known = [n for p in profiles_of(path) for n in get_profile(p).reward_funcs] or list(TRL_REWARD_FUNCS)
    return name if name in known or (not profiles_of(path) and "." in name) else known[0]


@pytest.fixture(scope="module")
def trl_parser():
    trl = pytest.importorskip("trl", reason="to_trl's oracle is TRL 1.16 (pip install -e '.[test]')")
    if trl.__version__ != "1.16.0":
        pytest.skip(f"the oracle is trl 1.16.0, found {trl.__version__}")
    from trl.scripts.grpo import make_parser

    return make_parser


def both_sides(make_parser, data: dict, world_size: int, profiles: tuple[str, ...], tmp_path: Path):
    from transformers import TrainingArguments

    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    config = GRPORunConfig.from_yaml(path, world_size=world_size, profiles=profiles)
    declared = property(lambda self: world_size)
    with (
        mock.patch.object(TrainingArguments, "world_size", declared),
        mock.patch.dict(os.environ),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        theirs = make_parser().parse_args_and_config(["--config", str(path)], fail_with_unknown_args=False)
        ours = config.to_trl()
    return config, ours, theirs


def normalized(config) -> dict:
    """Values grpo-config reads differently from how they are written, each with a warning and a safe fix
    (log_level: 20 -> 'info', which TRL's parser keeps as 20 and its trainer cannot look up)."""
    return {
        name: value
        for d in config.diagnostics
        if d.code in ("GRPO-T004", "GRPO-T009") and d.fix
        for name, value in d.fix.set.items()
    }


def assert_equal_to_trl(config, ours, theirs) -> None:
    script_ours, *rest_ours = ours
    script_theirs, *rest_theirs = theirs
    expected = normalized(config)
    for a, b in zip(rest_ours, rest_theirs):
        assert type(a) is type(b)
        if a != b:
            left, right = dataclasses.asdict(a), dataclasses.asdict(b)
            differ = {k: (left[k], right[k]) for k in left if left[k] != right[k]}
            unexplained = {k: v for k, v in differ.items() if k not in expected or left[k] != expected[k]}
            assert not unexplained, f"{type(a).__name__} differs from TRL's parser (ours, TRL's): {unexplained}"
    assert isinstance(script_ours, type(script_theirs))
    trl_fields = {f.name for f in dataclasses.fields(script_theirs)}
    assert {k: getattr(script_ours, k) for k in trl_fields} == dataclasses.asdict(script_theirs)
    for view in config.script_args.values():  # the profile's keys: on the script arguments, never dropped
        values = view.model_dump()
        for key in set(values) & set(config.check_result.raw):
            assert getattr(script_ours, key) == values[key], key


VALID = corpus_files("valid") + sorted(p for p in FIXTURES.glob("*.yaml") if not p.name.startswith("invalid"))


@pytest.mark.oracle
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_to_trl_equals_what_trl_grpo_parses(trl_parser, path, tmp_path):
    data, world_size = runnable(path)
    config, ours, theirs = both_sides(trl_parser, data, world_size, profiles_of(path), tmp_path)
    assert_equal_to_trl(config, ours, theirs)
    assert ours.env == {k: str(v) for k, v in (data.get("env") or {}).items()}
    assert ours.launch == {k: data[k] for k in config.launch}


@pytest.mark.oracle
def test_every_field_round_trips(trl_parser, tmp_path):
    """Every TRL field the fixtures do not cover, set to a non-default value, reaches the same dataclass field."""
    data = {
        "use_cpu": True,
        "dataset_name": "x",
        "model_name_or_path": "m",
        "reward_funcs": ["accuracy_reward"],
        "ignore_data_skip": True,
        "label_smoothing_factor": 0.1,
        "lora_alpha": 8,
        "dataset_test_split": "dev",
        "gradient_checkpointing_kwargs": {"use_reentrant": False},
        "trust_remote_code": True,
        "top_k": 5,
        "repetition_penalty": 1.1,
        "mask_truncated_completions": True,
        "num_train_epochs": 2,
        "save_total_limit": 2,
        "run_name": "r",
        "ddp_timeout": 600,
        "optim_args": "a=1",
        "generation_kwargs": {"do_sample": True},
        "chat_template_kwargs": {"enable_thinking": False},
    }
    config, ours, theirs = both_sides(trl_parser, data, 1, (), tmp_path)
    assert_equal_to_trl(config, ours, theirs)
    by_field = {f.name: obj for obj in ours for f in dataclasses.fields(obj)}
    for key, value in config.model_dump(exclude_unset=True).items():
        assert getattr(by_field[key], key) == value or key in ("report_to",), key


def test_without_trl_the_error_says_how_to_get_it(monkeypatch):
    from grpo_schema.api.trl_export import TrlUnavailableError

    monkeypatch.setitem(sys.modules, "trl", None)  # `import trl` raises ImportError
    with pytest.raises(TrlUnavailableError, match=r"pip install 'trl==1.16.0'"):
        GRPORunConfig(num_generations=4).to_trl()


@pytest.mark.oracle
def test_a_key_no_dataclass_takes_is_refused(trl_parser):
    pytest.importorskip("trl")
    config = GRPORunConfig.model_validate(
        {"dataset_name": "d", "system_prompt": "s", "use_cpu": True}, context={"profiles": ["open-r1"]}
    )
    from trl.scripts.grpo import GRPOScriptArguments

    with pytest.raises(ValueError, match="no TRL dataclass takes system_prompt"):
        config.to_trl(script_args_class=GRPOScriptArguments)
    script_args, training_args, *_ = config.to_trl()
    assert script_args.system_prompt == "s" and isinstance(script_args, GRPOScriptArguments)
