"""Oracle, value lists: each release's own `trl grpo` parser (release_parser_child.py, in its .venv-trl interpreter,
with the transformers of its table) on one file per optimizer, schedule and strategy name any release knows, and on
misspellings, against `grpo validate --trl-version R` (marker `trl_release`). TrainingArguments turns optim,
lr_scheduler_type and the *_strategy keys into its enums when it is built, so a name its transformers lacks stops
the parser; grpo must refuse exactly those (GRPO-T003, naming the release's own names) and report the same unknown
keys (none)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from grpo_schema import check_file
from grpo_schema.versions import releases, surface
from tests.support.release_envs import BUILT_BY_TEST_SH, MAIN_VENV_RELEASE, interpreter, missing

CHILD = Path(__file__).with_name("release_parser_child.py")
FIELDS = (
    "optim",
    "lr_scheduler_type",
    "save_strategy",
    "eval_strategy",
    "logging_strategy",
    "hub_strategy",
    "half_precision_backend",  # names only documented (no Enum): the parser takes any text, up to TRL 0.26
    "fp16_backend",
)
MISSPELT = {
    "optim": ("adamw", "adam_torch", "AdamW"),
    "lr_scheduler_type": ("cosine_decay", "Linear", "wsd"),
    "save_strategy": ("step", "never"),
    "eval_strategy": ("steps ", "always"),
    "logging_strategy": ("epochs",),
    "hub_strategy": ("end_only",),
    "half_precision_backend": ("cuda_amp", "amp"),
    "fp16_backend": ("cuda_amp",),
}
BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B",
    "dataset_name": "trl-lib/tldr",
    "per_device_train_batch_size": 4,
    "num_generations": 4,
    "max_steps": 10,
}

# TrainingArguments also refuses a schedule that needs evaluation when none is set (GRPO-O005)
REFUSED_WITH = {"GRPO-T003", "GRPO-O005"}

pytestmark = pytest.mark.trl_release


def values(name: str) -> list[str]:
    """Every name some release's table accepts for `name`, and misspellings no release accepts."""
    found: dict[str, None] = {}
    for release in releases():
        info = surface(release).fields.get(name)
        found.update(dict.fromkeys(info.choices or () if info is not None else ()))
    return [*found, *MISSPELT[name]]


def write_cases(folder: Path, release: str) -> dict[str, tuple[str, str]]:
    """path -> (field, value): one file per value of each key the release reads, the rest a config every release
    parses."""
    cases = {}
    for name in (name for name in FIELDS if name in surface(release).fields):
        for value in values(name):
            if value == "apex":  # the parser imports apex for it: a fact of the environment, not of the name
                continue
            path = folder / f"{name}-{value}.yaml"
            # bf16 off beside a backend: apex with bf16 is a refusal of its own (transformers 4.x), not a name's
            extra = {"bf16": False} if name.endswith("_backend") else {}
            path.write_text(yaml.safe_dump({**BASE, "output_dir": str(folder / "out"), name: value, **extra}))
            cases[str(path)] = (name, value)
    return cases


def grpo_refuses(path: str, release: str, name: str) -> bool:
    checked = check_file(path, trl_version=release, world_size=1)
    return any(d.code in REFUSED_WITH and name in d.fields and d.severity == "error" for d in checked.diagnostics)


@pytest.mark.parametrize("release", [*BUILT_BY_TEST_SH, MAIN_VENV_RELEASE])
def test_grpo_refuses_an_optimizer_or_schedule_exactly_when_the_release_s_parser_does(release, tmp_path):
    python = interpreter(release)
    if python is None:
        missing(release)
    cases = write_cases(tmp_path, release)
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [str(python), str(CHILD), str(out), *cases], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["release"] == release
    disagreements, refused = {}, {}
    for path, (name, value) in cases.items():
        entry = result["files"][path]
        assert entry["unknown"] == [], (path, entry["unknown"])
        theirs = entry["verdict"] != "parses"
        if theirs:
            assert "ValueError" in entry["verdict"], entry["verdict"]
            refused.setdefault(name, []).append(value)
        if grpo_refuses(path, release, name) != theirs:
            disagreements[f"{name}: {value}"] = entry["verdict"][:160]
    print(f"{release}: {len(cases) - len(disagreements)}/{len(cases)} values judged alike; refused {refused}")
    assert disagreements == {}
    assert set(refused["optim"]) >= set(MISSPELT["optim"])  # the release's parser has its own list, not any name
