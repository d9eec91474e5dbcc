"""`grpo plan` reads the sharding the launch states: the accelerate config file (`accelerate_config`,
`config_file`), the DeepSpeed JSON (`deepspeed`), `--offload`, and says where each fact came from.

Files: TRL's own bundled accelerate configs (the zero3.yaml open-r1's recipes/accelerate_configs/zero3.yaml
also is), copies of accelerate configs in ../shared/grpo-corpus when there are any, and fixtures of ours in the
same form (tests/fixtures/launch)."""

from pathlib import Path

import pytest

from grpo_schema.commands.plan import check_for_hardware

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "launch"
CORPUS = REPO.parent / "shared" / "grpo-corpus"
BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "dtype": "bfloat16",
    "bf16": True,
    "per_device_train_batch_size": 4,
    "num_generations": 8,
    "max_completion_length": 1024,
}
GIB = 1024**3


def plan(extra: dict, **options):
    result, report = check_for_hardware(
        {**BASE, **extra}, str(REPO / "run.yaml"), "4xA100-40GB", prompt_length=256, batch_fixes=False, **options
    )
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    return report


def trl_bundled(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("trl")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("TRL is not installed: its bundled accelerate configs are the real files read here")
    return Path(list(spec.submodule_search_locations)[0]) / "accelerate_configs" / f"{name}.yaml"


def test_a_real_zero3_accelerate_config_changes_the_plan():
    path = trl_bundled("zero3")
    plain = plan({})
    zero3 = plan({"accelerate_config": str(path)})
    assert plain.setup.strategy == "ddp" and zero3.setup.strategy == "zero3"
    assert zero3.memory.part("weights") < plain.memory.part("weights") / 3  # sharded over 4
    assert zero3.memory.total != plain.memory.total
    assert any(str(path) in note and "zero_stage 3" in note for note in zero3.assumptions)
    assert any("offload_optimizer_device none" in note for note in zero3.assumptions)


def test_offload_read_from_an_accelerate_config_file():
    path = FIXTURES / "zero3_offload.yaml"
    on_gpu = plan({"accelerate_config": str(trl_bundled("zero3"))})
    offloaded = plan({"accelerate_config": str(path)})
    s = offloaded.setup
    assert (s.strategy, s.offload_optimizer, s.offload_params) == ("zero3", True, True)
    assert offloaded.memory.part("optimizer") == 0 and on_gpu.memory.part("optimizer") > 15 * GIB
    assert offloaded.memory.part("weights") < on_gpu.memory.part("weights") / 3  # the 2N/P shards leave the GPU
    assert any("offload_param_device cpu" in n and str(path) in n for n in offloaded.assumptions)
    # --offload says the same from the command line, and wins over the file
    flag = plan({"accelerate_config": str(trl_bundled("zero3"))}, offload="both")
    assert flag.memory.total == offloaded.memory.total
    assert any("--offload both" in n for n in flag.assumptions)
    back = plan({"accelerate_config": str(path)}, offload="none")
    assert back.memory.total == on_gpu.memory.total


# open-r1's recipes/accelerate_configs/zero3.yaml (huggingface/open-r1 at e450a6fb) and the zero3.yaml TRL 1.16
# installs are the same bytes: the installed file is read here as the real open-r1 config.
OPEN_R1_ZERO3_SHA256 = "54ddc70d2c449ff582bd8a4c2f8b6158eedca6bd8ddfd5700098ccbcfb707f11"


def test_offload_turned_on_in_the_real_open_r1_zero3_config_changes_the_plan(tmp_path):
    """open-r1's zero3.yaml with its two offload keys set to cpu, as a user turns offload on in that file."""
    import hashlib

    import yaml

    real = trl_bundled("zero3")
    if hashlib.sha256(real.read_bytes()).hexdigest() != OPEN_R1_ZERO3_SHA256:
        pytest.skip("the installed TRL's zero3.yaml is no longer open-r1's: pin trl==1.16.0 (the test extra)")
    settings = yaml.safe_load(real.read_text())
    assert settings["deepspeed_config"]["offload_optimizer_device"] == "none"
    settings["deepspeed_config"].update(offload_optimizer_device="cpu", offload_param_device="cpu")
    edited = tmp_path / "zero3.yaml"
    edited.write_text(yaml.safe_dump(settings))
    as_shipped, offloaded = plan({"accelerate_config": str(real)}), plan({"accelerate_config": str(edited)})
    assert (as_shipped.setup.offload_optimizer, as_shipped.setup.offload_params) == (False, False)
    assert (offloaded.setup.offload_optimizer, offloaded.setup.offload_params) == (True, True)
    assert offloaded.memory.part("optimizer") == 0 < as_shipped.memory.part("optimizer")
    assert offloaded.memory.total < as_shipped.memory.total - 10 * GIB
    assert offloaded.host.part("offloaded states") > 0 == as_shipped.host.part("offloaded states")
    assert any("offload_param_device cpu" in n and str(edited) in n for n in offloaded.assumptions)


def test_a_relative_path_is_found_beside_the_config():
    report = plan({"accelerate_config": "tests/fixtures/launch/zero3_offload.yaml"})
    assert report.setup.offload_params


def test_the_deepspeed_json_gives_offload_and_buckets():
    path = FIXTURES / "ds_zero3_offload_optimizer.json"
    report = plan({"deepspeed": str(path)})
    s = report.setup
    assert (s.strategy, s.offload_optimizer, s.offload_params) == ("zero3", True, False)
    assert s.reduce_bucket_size == 0  # "auto": transformers fills hidden_size squared
    assert s.max_live_parameters == 3_000_000_000
    hidden = report.model.hidden_size
    assert report.memory.part("reduce bucket") == 2 * hidden * hidden
    assert report.memory.part("live parameters") == 2 * (3_000_000_000 - report.model.largest_layer_params())
    assert any("reduce_bucket_size auto" in n for n in report.assumptions)


def test_the_service_reads_no_file_a_client_names():
    report = plan({"accelerate_config": str(FIXTURES / "zero3_offload.yaml")}, local_files=False)
    assert report.setup.strategy == "zero3" and not report.setup.offload_params  # its name only: not read
    assert any("(not read)" in n for n in report.assumptions)
    named = plan({"accelerate_config": "zero3"}, local_files=False)  # a bundled name is data
    assert named.setup.strategy == "zero3" and not named.setup.offload_optimizer


def test_a_missing_file_is_said():
    report = plan({"accelerate_config": "configs/zero3.yaml"})
    assert report.setup.strategy == "zero3"  # from the file's name
    assert any("configs/zero3.yaml: no such file here" in n for n in report.assumptions)


def corpus_accelerate_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*.yaml") if "distributed_type:" in p.read_text(errors="replace"))


def test_accelerate_configs_in_the_corpus():
    if not CORPUS.is_dir():
        pytest.skip("../shared/grpo-corpus is absent (the shared corpus is only on the project's machines)")
    files = corpus_accelerate_files()
    if not files:
        pytest.skip("../shared/grpo-corpus holds no accelerate config file (none has a distributed_type)")
    for path in files:
        report = plan({"accelerate_config": str(path)})
        assert any(str(path) in n for n in report.assumptions), path
