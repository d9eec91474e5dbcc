"""GRPO-T015: half_precision_backend apex with bf16 on, which transformers 4.x refuses when a TRL release up to
0.26 builds its arguments. From 0.19, bf16 left out means `not fp16`, so apex alone is refused there; 0.14-0.18
default bf16 to false. The oracle test builds GRPOConfig in the real 0.16.1 and 0.19.1 environments."""

from __future__ import annotations

import json
import subprocess

import pytest

from grpo_schema.engine.check import check_mapping, check_text
from tests.support.release_envs import interpreter, missing

BASE = {"model_name_or_path": "Qwen/Qwen2.5-0.5B", "dataset_name": "trl-lib/tldr", "output_dir": "out"}
TRANSFORMERS = {"0.16": "4.50.3", "0.19": "4.53.1", "0.26": "4.57.3"}  # what each release's table was read from
CASES = [  # (release, keys, refused)
    ("0.16", {"half_precision_backend": "apex"}, False),  # bf16 off by default
    ("0.16", {"half_precision_backend": "apex", "bf16": True}, True),
    ("0.16", {"half_precision_backend": "apex", "bf16": "true"}, True),  # the parser converts the text
    ("0.19", {"half_precision_backend": "apex"}, True),  # bf16 None becomes `not fp16`
    ("0.19", {"half_precision_backend": "apex", "fp16": True}, False),
    ("0.19", {"half_precision_backend": "apex", "bf16": False}, False),
    ("0.19", {"half_precision_backend": "auto", "bf16": True}, False),
    ("0.26", {"half_precision_backend": "apex", "bf16": None}, True),
]


def t015(release: str, keys: dict) -> list:
    return [d for d in check_mapping({**BASE, **keys}, trl_version=release).diagnostics if d.code == "GRPO-T015"]


@pytest.mark.parametrize(("release", "keys", "refused"), CASES)
def test_apex_with_bf16_on_is_refused_as_the_release_builds_its_arguments(release, keys, refused):
    found = t015(release, keys)
    assert len(found) == int(refused), found
    if refused:
        (said,) = found
        assert said.severity == "error" and said.fields[0] == "half_precision_backend"
        assert f"transformers {TRANSFORMERS[release]}," in said.message
        assert said.fix.set == {"half_precision_backend": "auto"} and not said.fix.safe
        fixed = {**BASE, **keys, **said.fix.set}
        assert t015(release, {k: v for k, v in fixed.items() if k not in BASE}) == []  # the fix holds


def test_a_transformers_5_release_names_the_removed_key_not_the_pair():
    """1.16 (transformers 5) no longer reads half_precision_backend at all: K003 says so, T015 stays silent."""
    codes = {d.code for d in check_mapping({**BASE, "half_precision_backend": "apex"}).diagnostics}
    assert "GRPO-K003" in codes and "GRPO-T015" not in codes
    assert t015("1.8", {"half_precision_backend": "apex", "bf16": True}) == []


def test_the_finding_is_on_the_half_precision_backend_line():
    text = "model_name_or_path: m\ndataset_name: d\noutput_dir: o\nbf16: true\nhalf_precision_backend: apex\n"
    (said,) = [d for d in check_text(text, "apex.yaml", trl_version="0.16").diagnostics if d.code == "GRPO-T015"]
    assert said.line == 5


BUILD = """
import json, sys
import transformers.training_args
from trl import GRPOConfig
transformers.training_args.is_torch_bf16_gpu_available = lambda *args, **kwargs: True  # as on a bf16 GPU
verdicts = []
for keys in json.loads(sys.argv[1]):
    try:
        GRPOConfig(output_dir="out", **keys)
        verdicts.append("ok")
    except (ValueError, ImportError) as error:
        verdicts.append(str(error))
print(json.dumps(verdicts))
"""


@pytest.mark.trl_release
@pytest.mark.parametrize("release", ["0.16.1", "0.19.1"])
def test_the_release_s_own_arguments_refuse_exactly_these(release):
    """The real GRPOConfig raises the apex error exactly where T015 is found, built as on a GPU with bf16 (on this
    CPU the release's hardware check would stop bf16 first). apex without bf16 then fails only because apex is not
    installed here, which is the environment's matter, not the config's."""
    python = interpreter(release)
    if python is None:
        missing(release)
    cases = [(keys, refused) for short, keys, refused in CASES if release.startswith(short)]
    typed = [{k: (v == "true" if v in ("true", "false") else v) for k, v in keys.items()} for keys, _ in cases]
    done = subprocess.run([str(python), "-c", BUILD, json.dumps(typed)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts = json.loads(done.stdout.strip().splitlines()[-1])
    for (keys, refused), verdict in zip(cases, verdicts):
        assert ("GPU bf16 is not supported by apex" in verdict) == refused, (keys, verdict)
