"""Each environment rule of `grpo doctor` on an environment built to break it: the code, the message and the pin."""

from __future__ import annotations

from grpo_schema.doctor import diagnose
from grpo_schema.doctor.environment import Environment, Package

# What TRL 1.16 needs (its committed requirements), met: each test changes one thing.
MET = {
    "trl": "1.16.0",
    "torch": "2.6.0+cu124",
    "transformers": "4.57.0",
    "accelerate": "1.10.1",
    "datasets": "4.7.0",
    "huggingface-hub": "0.34.0",
    "jinja2": "3.1.4",
    "numpy": "2.1.0",
    "packaging": "24.1",
    "pandas": "2.2.3",
    "psutil": "6.0.0",
    "pyarrow": "21.0.0",
    "pyyaml": "6.0.2",
}


def env(changes: dict[str, str | None] | None = None, **extra: dict) -> Environment:
    versions = {**MET, **(changes or {})}
    packages = {
        name: Package(name, version, extra=extra.get(name.replace("-", "_"), {}))
        for name, version in versions.items()
        if version is not None
    }
    return Environment("freeze", "requirements.lock", packages, python_version="3.11.9")


def found(report, code: str):
    return [d for d in report.diagnostics if d.code == code]


def test_the_environment_that_meets_the_release_has_no_finding():
    assert diagnose(env()).diagnostics == []


def test_no_trl_pins_the_release_the_file_is_for():
    [diag] = found(diagnose(env({"trl": None}), {}, None, "0.19.1", "flag"), "GRPO-C001")
    assert diag.severity == "error" and "trl is not installed in requirements.lock" in diag.message
    assert "the file is for TRL 0.19.1 (--trl-version)" in diag.message and "trl==0.19.1" in diag.hint


def test_a_requirement_of_the_release_below_its_range():
    [diag] = found(diagnose(env({"transformers": "4.40.0"})), "GRPO-C002")
    assert diag.message == "trl 1.16.0 needs transformers>=4.56.2; requirements.lock has transformers 4.40.0"
    assert "transformers>=4.56.2" in diag.hint


def test_a_python_outside_the_release_range():
    environment = env()
    environment.python_version = "3.9.18"
    [diag] = found(diagnose(environment), "GRPO-C002")
    assert "needs Python >=3.11" in diag.message and "runs Python 3.9.18" in diag.message


def test_quantised_loading_needs_the_release_bitsandbytes():
    report = diagnose(env({"bitsandbytes": "0.40.0"}), {"load_in_4bit": True})
    [diag] = found(report, "GRPO-C007")
    assert diag.fields == ("load_in_4bit",) and "bitsandbytes>=0.45.1" in diag.message
    assert "has bitsandbytes 0.40.0" in diag.message


def test_use_peft_without_peft():
    [diag] = found(diagnose(env(), {"use_peft": True}), "GRPO-C012")
    assert diag.fields == ("use_peft",) and "needs peft>=0.13.0, which is not installed" in diag.message


def test_no_torch():
    [diag] = found(diagnose(env({"torch": None})), "GRPO-C013")
    assert "torch is not installed in requirements.lock" in diag.message and "torch" in diag.hint


def test_the_installed_release_differs_from_the_one_the_file_is_for():
    [diag] = found(diagnose(env({"trl": "0.19.1"}), {}, None, "1.16.0", "flag"), "GRPO-C014")
    assert "has trl 0.19.1; the file is judged for TRL 1.16.0 (--trl-version)" in diag.message
    assert "trl==1.16.0" in diag.hint and "--trl-version 0.19.1" in diag.hint
    assert not found(diagnose(env({"trl": "0.19.1"})), "GRPO-C014")  # judged as what is installed: no finding


def test_flash_attn_installed_before_the_torch_it_runs_with():
    config = {"attn_implementation": "flash_attention_2"}
    stale = env({"flash-attn": "2.7.4"}, flash_attn={"mtime": 1000.0}, torch={"mtime": 5000.0})
    [diag] = found(diagnose(stale, config), "GRPO-C018")
    assert diag.severity == "warning" and "flash-attn 2.7.4 was installed before torch 2.6.0+cu124" in diag.message
    assert "--force-reinstall flash-attn" in diag.hint
    fresh = env({"flash-attn": "2.7.4"}, flash_attn={"mtime": 5000.0}, torch={"mtime": 1000.0})
    assert not found(diagnose(fresh, config), "GRPO-C018")
