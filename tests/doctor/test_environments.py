"""`grpo doctor` against real environments built here from the package registry: `python -m venv` and
`pip install --no-deps` of the releases named (metadata-bearing wheels; pip's cache makes a rebuild take seconds).
torch is not reinstalled in each: a folder holding links to this venv's own torch installation (its files and its
.dist-info) is put on each environment's path with a .pth file, so the environment has a real torch with its real
metadata. The vLLM-range case runs twice: in a real environment with vllm 0.32.0's wheel (326 MB, installed
without its dependencies, ~15 s from pip's cache) beside TRL 1.16, and from freeze files of TRL 1.16's environment
with a vllm line added on each side of the range.

Environments are built once per session under a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GRPO = [sys.executable, "-m", "grpo_schema"]

TRL_116 = [
    "trl==1.16.0",
    "accelerate==1.16.0",
    "datasets==5.2.0",
    "huggingface_hub==2.4.0",
    "jinja2==3.1.6",
    "numpy==2.4.6",
    "packaging==26.4",
    "pandas==3.1.1",
    "psutil==7.2.2",
    "pyarrow==26.0.1",
    "pyyaml==6.0.4",
    "transformers==5.23.0",
]


def _torch_folder(base: Path) -> Path:
    """Links to this interpreter's torch installation (found through its metadata, not imported)."""
    from importlib import metadata

    dist = metadata.distribution("torch")
    site = Path(str(dist.locate_file(""))).resolve()
    folder = base / "torch-link"
    if not folder.exists():
        folder.mkdir()
        for name in os.listdir(site):
            if name in ("torch", "torchgen", "functorch") or (
                name.startswith("torch-") and name.endswith(".dist-info")
            ):
                (folder / name).symlink_to(site / name)
    return folder


def _site(env: Path) -> Path:
    return next((env / "lib").glob("python*/site-packages"))


@pytest.fixture(scope="session")
def build(tmp_path_factory):
    base = tmp_path_factory.mktemp("doctor-envs")
    torch = _torch_folder(base)
    built: dict[str, Path] = {}

    def make(name: str, packages: list[str], with_torch: bool = True, over: str | None = None) -> Path:
        if name in built:
            return built[name]
        env = base / name
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
        if packages:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "--python",
                    str(env / "bin" / "python"),
                    "install",
                    "-q",
                    "--no-deps",
                    "--no-compile",
                    "--disable-pip-version-check",
                    *packages,
                ],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stderr[-2000:]
        paths = ([str(torch)] if with_torch else []) + ([str(_site(built[over]))] if over else [])
        if paths:
            (_site(env) / "grpo_doctor_test.pth").write_text("\n".join(paths) + "\n")
        built[name] = env
        return env

    return make


def doctor(*args: str, cwd: Path | None = None) -> tuple[int, dict, str]:
    done = subprocess.run(
        [*GRPO, "doctor", *args, "--format", "json"], capture_output=True, text=True, cwd=cwd or ROOT, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {}), done.stderr


def found(doc: dict) -> set[tuple[str, str]]:
    """(code, hint) of every finding: the hint carries the pin and names no source, so it is the same whether
    the environment was read from an interpreter or from its freeze file."""
    return {(d["code"], d["hint"]) for f in doc["files"] for d in f["diagnostics"]}


def freeze(env: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_old_trl_with_transformers_5_is_named_with_the_pin_and_its_freeze_agrees(build, tmp_path):
    env = build("trl019-tf5", ["trl==0.19.1", "transformers==5.23.0", "accelerate==1.16.0", "datasets==4.8.5"])
    rc, doc, _ = doctor("--python", str(env / "bin" / "python"))
    assert rc == 1
    assert doc["environment"]["packages"]["trl"] == "0.19.1" and doc["trl_release"] == "0.19.1"
    bad = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C003"]
    assert len(bad) == 1 and "KB01" in bad[0]["message"] and "transformers 5.23.0" in bad[0]["message"]
    assert "`transformers<5`" in bad[0]["hint"]
    assert doc["environment"]["packages"]["torch"].startswith("2.13.0")  # the linked torch, read from metadata
    frozen = tmp_path / "freeze.txt"
    frozen.write_text(freeze(env))
    rc2, doc2, _ = doctor("--freeze", str(frozen))
    assert rc2 == 1 and found(doc2) == found(doc)


def test_old_trl_with_the_transformers_it_was_released_with_passes(build):
    env = build("trl019-tf4", ["trl==0.19.1", "transformers==4.53.1", "accelerate==1.16.0", "datasets==4.8.5"])
    rc, doc, _ = doctor("--python", str(env / "bin" / "python"))
    assert rc == 0, doc["diagnostics"]
    assert doc["diagnostics"] == []


def test_trl_116_config_with_liger_and_no_liger_kernel_then_with_it(build, tmp_path):
    env = build("trl116", TRL_116)
    config = tmp_path / "liger.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: trl-lib/DeepMath-103K\n"
        "output_dir: out\nuse_liger_kernel: true\n"
    )
    rc, doc, _ = doctor(str(config), "--python", str(env / "bin" / "python"))
    assert rc == 1
    [liger] = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C006"]
    assert liger["fields"] == ["use_liger_kernel"] and liger["line"] == 4
    assert "`liger-kernel>=0.8.2`" in liger["hint"] and "not installed" in liger["message"]
    assert [d["code"] for d in doc["diagnostics"]] == ["GRPO-C006"]  # the rest of TRL 1.16's needs are met
    # the same environment with liger-kernel added (its own venv, the first one's packages on its path)
    with_liger = build("trl116-liger", ["liger-kernel==0.8.5"], over="trl116")
    rc, doc, _ = doctor(str(config), "--python", str(with_liger / "bin" / "python"))
    assert rc == 0 and doc["diagnostics"] == [], doc["diagnostics"]
    # the freeze of the first environment says the same as the interpreter
    frozen = tmp_path / "freeze.txt"
    frozen.write_text(freeze(env))
    rc2, doc2, _ = doctor(str(config), "--freeze", str(frozen))
    rc1, doc1, _ = doctor(str(config), "--python", str(env / "bin" / "python"))
    assert (rc1, found(doc1)) == (rc2, found(doc2)) == (1, {("GRPO-C006", liger["hint"])})


def test_trl_116_with_a_vllm_outside_its_range(build, tmp_path):
    env = build("trl116", TRL_116)
    lines = [ln for ln in freeze(env).splitlines() if not ln.startswith("torch==")]
    config = tmp_path / "vllm.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\nuse_vllm: true\nvllm_mode: colocate\n"
    )
    cuda_torch = ["torch==2.13.0", "nvidia-cuda-runtime-cu12==12.9.79"]
    frozen = tmp_path / "freeze.txt"
    frozen.write_text("\n".join(lines + cuda_torch + ["vllm==0.32.0"]) + "\n")
    rc, doc, _ = doctor(str(config), "--freeze", str(frozen))
    assert rc == 1
    [v] = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C005"]
    assert "vllm 0.32.0" in v["message"] and "`vllm<=0.31.0,>=0.22.0`" in v["hint"] and v["fields"] == ["use_vllm"]
    frozen.write_text("\n".join(lines + cuda_torch + ["vllm==0.30.0"]) + "\n")
    rc, doc, _ = doctor(str(config), "--freeze", str(frozen))
    assert rc == 0 and doc["diagnostics"] == [], doc["diagnostics"]


@pytest.mark.slow
def test_trl_116_with_a_real_vllm_outside_its_range_installed(build, tmp_path):
    """The same case in a real environment: vllm 0.32.0's wheel installed (without its dependencies) beside TRL
    1.16's; the interpreter and the environment's own pip freeze give the same finding and pin."""
    build("trl116", TRL_116)
    env = build("trl116-vllm", ["vllm==0.32.0"], over="trl116")
    config = tmp_path / "vllm.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\nuse_vllm: true\nvllm_mode: colocate\n"
    )
    rc, doc, _ = doctor(str(config), "--python", str(env / "bin" / "python"))
    [v] = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C005" and "vllm 0.32.0" in d["message"]]
    assert rc == 1 and "`vllm<=0.31.0,>=0.22.0`" in v["hint"], v
    frozen = tmp_path / "freeze.txt"
    frozen.write_text(freeze(env))
    rc2, doc2, _ = doctor(str(config), "--freeze", str(frozen))
    # both sides also say that vllm 0.32.0's own transformers range excludes the environment's (GRPO-C020)
    hints = [d["hint"] for d in doc["diagnostics"] if "vllm 0.32.0" in d["message"]]
    assert rc2 == 1 and [d["hint"] for d in doc2["diagnostics"] if "vllm 0.32.0" in d["message"]] == hints
    assert v["hint"] in hints and any(d["code"] == "GRPO-C020" for d in doc2["diagnostics"])


def test_package_files_without_metadata_are_reported(build):
    env = build("bare", ["trl==0.19.1", "transformers==4.53.1", "accelerate==1.16.0", "datasets==4.8.5"])
    (_site(env) / "flash_attn").mkdir(exist_ok=True)
    (_site(env) / "flash_attn" / "__init__.py").write_text("")
    rc, doc, _ = doctor("--python", str(env / "bin" / "python"))
    [bare] = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C016"]
    assert "flash-attn is on the path without metadata" in bare["message"]
    assert rc == 0  # a warning
