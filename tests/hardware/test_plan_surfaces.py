"""`grpo plan`, `grpo validate --hardware` and the verdict's fixes on real configs: one engine behind each."""

import json

import pytest

from grpo_schema.cli import main
from grpo_schema.commands.plan import check_for_hardware
from tests.conftest import corpus_files
from tests.support.cli import grpo
from tests.support.configs import BIG, SMALL


def _plan(capsys, text, tmp_path, *args):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    code = main(["plan", str(path), *args])
    return code, capsys.readouterr()


def test_json_has_fits_and_per_gpu_parts(capsys, tmp_path):
    code, out = _plan(capsys, SMALL, tmp_path, "--hardware", "8xH100-80GB", "--format", "json")
    doc = json.loads(out.out)["files"][0]
    assert code == 0 and doc["fits"] is True
    names = {p["name"] for p in doc["per_gpu"]["parts"]}
    assert {"weights", "gradients", "optimizer", "activations", "logits", "framework"} <= names
    assert doc["world_size"] == 8 and doc["hardware"]["gpus"] == 8
    assert doc["time"]["flops_per_step"] > 0 and doc["time"]["step_seconds"] > 0


def test_no_fit_is_an_error_with_checked_fixes(capsys, tmp_path):
    code, out = _plan(capsys, BIG, tmp_path, "--hardware", "1xH100-80GB", "--format", "json")
    doc = json.loads(out.out)["files"][0]
    assert code == 1 and doc["fits"] is False
    [no_fit] = [d for d in doc["diagnostics"] if d["code"] == "GRPO-H001"]
    assert no_fit["severity"] == "error" and no_fit["fix"] and "GiB short" in no_fit["message"]
    # the offered edit, applied, really fits (the same engine re-checks it here)
    import yaml

    from grpo_schema.engine.diagnostics import Fix
    from grpo_schema.engine.yamledit import apply_fix

    fixed = apply_fix(yaml.safe_load(BIG), Fix.from_dict(no_fit["fix"]))
    _, report = check_for_hardware(fixed, "fixed", "1xH100-80GB")
    assert report.fits is True


def test_smaller_batch_keeps_the_generation_batch(tmp_path):
    text = BIG.replace("use_vllm: true\n", "").replace("vllm_gpu_memory_utilization: 0.5\n", "")
    result, report = check_for_hardware(text, "x", "1xA100-80GB")  # a smaller batch is one of the ways to fit
    assert report.fits is False
    offered = [d for d in report.diagnostics if d.code in ("GRPO-H001", "GRPO-H002")][0]
    edits = [offered.fix, *offered.alternatives]
    batch = [f for f in edits if "per_device_train_batch_size" in f.set]
    assert batch
    for fix in batch:
        b, ga = fix.set["per_device_train_batch_size"], fix.set["gradient_accumulation_steps"]
        assert b * ga == 16 * 4
        assert all(key in fix.title for key in fix.set), fix.title  # the title names every key it changes


def test_host_ram_line_counts_one_process_in_the_singular(capsys, tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text(BIG)
    main(["validate", str(path), "--hardware", "1xA100-80GB"])
    out = capsys.readouterr().out
    assert "1 process" in out and "process(es)" not in out and "worker(s)" not in out


def test_validate_with_hardware_reports_h_codes(capsys, tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(BIG)
    code = main(["validate", str(path), "--hardware", "1xH100-80GB", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert "GRPO-H001" in {d["code"] for d in doc["files"][0]["diagnostics"]}


def test_hardware_section_is_read_and_flagged_for_trl(capsys, tmp_path):
    code, out = _plan(capsys, SMALL + "hardware: 2x8xA100-40GB\n", tmp_path, "--format", "json")
    doc = json.loads(out.out)["files"][0]
    assert doc["hardware"]["gpus"] == 16 and doc["world_size"] == 16
    assert "GRPO-H006" in {d["code"] for d in doc["diagnostics"]}
    assert not [d for d in doc["config_diagnostics"] if d["code"] == "GRPO-K001"]


def test_bad_spec_is_a_usage_error(capsys, tmp_path):
    code, out = _plan(capsys, SMALL, tmp_path, "--hardware", "8xNOPE")
    assert code == 2 and "unknown accelerator" in out.err and "GRPO-H008" in out.err


def test_unknown_model_is_a_coded_usage_error_not_a_crash(capsys, tmp_path):
    # Deliberate change: an estimate that cannot be made is a usage error (exit 2) with the fix, not exit 0.
    code, out = _plan(
        capsys, SMALL.replace("Qwen/Qwen2.5-0.5B-Instruct", "acme/Secret-9B"), tmp_path, "--hardware", "8xH100-80GB"
    )
    assert code == 2 and "GRPO-H005" in out.err and "config.json" in out.err and "Traceback" not in out.err


def test_unknown_engine_is_a_coded_usage_error(capsys, tmp_path):
    code, out = _plan(capsys, SMALL, tmp_path, "--hardware", "8xH100-80GB", "--engine", "deepspeed-chat")
    assert code == 2 and "GRPO-H009" in out.err and "grpo_runtime" in out.err


def test_config_errors_exit_1(capsys, tmp_path):
    code, out = _plan(
        capsys, SMALL.replace("reward_funcs: [accuracy_reward]\n", ""), tmp_path, "--hardware", "8xH100-80GB"
    )
    assert code == 1 and "the config itself has 1 error" in out.out


def test_json_names_the_engine(capsys, tmp_path):
    for engine in ("trl", "grpo_runtime"):
        code, out = _plan(capsys, SMALL, tmp_path, "--hardware", "8xH100-80GB", "--format", "json", "--engine", engine)
        assert json.loads(out.out)["files"][0]["engine"] == engine


def test_corpus_plans_without_traceback():
    files = corpus_files("valid")
    if not files:
        pytest.skip("the corpus (../shared/grpo-corpus) is not beside this checkout")
    run = grpo("plan", *map(str, files), "--hardware", "8xH100-80GB", "--profile", "open-r1", "--format", "json")
    assert "Traceback" not in run.stderr and run.returncode in (0, 1, 2), run.stderr[-2000:]
    # exit 2 only for models neither the catalogue nor a local config.json describes (fine-tunes under own names)
    assert all("GRPO-H005" in line for line in run.stderr.splitlines() if "error" in line), run.stderr[-2000:]
    docs = json.loads(run.stdout)["files"]
    assert len(docs) == len(files)
    assert all(d["fits"] in (True, False, None) for d in docs)
    assert any(d["fits"] is False for d in docs) and any(d["fits"] is True for d in docs)


def test_lm_head_tile_is_the_runtimes_when_it_has_one():
    # One named constant (head_memory.RUNTIME_TILE_ELEMENTS) mirrors grpo_runtime's chunked head; read the runtime's own
    # value from its source (grpo_schema never imports torch) once training/lm_head.py exists.
    import ast
    from pathlib import Path

    from grpo_schema.engine.hardware.head_memory import RUNTIME_TILE_ELEMENTS

    source = Path(__file__).resolve().parents[2] / "grpo_runtime" / "training" / "lm_head.py"
    if not source.is_file():
        pytest.skip("grpo_runtime has no chunked LM head yet")
    tree = ast.parse(source.read_text())
    values = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TILE_ELEMENTS" for t in node.targets)
    ]
    assert values and eval(compile(ast.Expression(values[0]), str(source), "eval")) == RUNTIME_TILE_ELEMENTS


def test_web_plan_defaults_to_grpo_runtime():
    pytest.importorskip("fastapi", reason="the service needs the web extra (pip install -e '.[web]')")
    import inspect

    from grpo_web.api import plan as api

    assert inspect.signature(api.plan).parameters["engine"].default == "grpo_runtime"
