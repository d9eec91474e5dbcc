"""Every example grpo_runtime can run here (its --dry-run says so) runs one optimizer step on the tiny local model:
the recipe's own settings, with the model, data and sizes swapped for CPU-sized ones. --dry-run's "can run" must
never be a run that fails at load or at its first step."""

from __future__ import annotations

import json

import pytest
import yaml

from grpo_web.presets import PRESET_DIR as EXAMPLES

pytest.importorskip("torch")
pytestmark = pytest.mark.slow
FILES = sorted(EXAMPLES.glob("*.yaml"))
ROWS = [{"prompt": f"say cat {i}", "solution": "$cat$", "target": "cat"} for i in range(16)]


@pytest.fixture(scope="module")
def local_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("examples-data")
    for split in ("train", "test"):
        (root / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return root


def on_tiny_model(settings: dict, model, data, out) -> dict:
    """The recipe with a CPU-sized model, data and batch (whole groups on one process), one step."""
    group = settings.get("num_generations") or 8
    small = dict(
        model_name_or_path=str(model),
        output_dir=str(out),
        max_steps=1,
        max_completion_length=8,
        per_device_train_batch_size=group,
        per_device_eval_batch_size=group,
        gradient_accumulation_steps=1,
        num_generations_eval=None,
        report_to="none",
        push_to_hub=False,
        save_steps=1,
        logging_steps=1,
    )
    changed = {**settings, **small}
    for key in (
        "num_processes",
        "generation_batch_size",
        "steps_per_generation",
        "dataset_config",
        "hub_model_id",
        "accelerate_config",
        "num_machines",
        "machine_rank",
        "main_process_ip",
        "main_process_port",
    ):
        changed.pop(key, None)
    if changed.get("max_prompt_length"):
        changed["max_prompt_length"] = 64
    if "datasets" in changed:
        changed["datasets"] = [{"path": "json", "data_files": str(data / "train.jsonl"), "split": "train"}]
    else:
        changed["dataset_name"] = str(data)
    return changed


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_an_example_the_runtime_accepts_runs_a_step(path, tiny_model_dir, local_data, tmp_path, capsys):
    from grpo_runtime.launch.cli import train_command

    profile = ["--profile", "open-r1"] if path.stem == "open-r1" else []
    if train_command([str(path), "--dry-run", *profile]) != 0:
        pytest.skip(f"grpo_runtime cannot run {path.name} here: {capsys.readouterr().err.strip().splitlines()[-1]}")
    settings = yaml.safe_load(path.read_text())
    run = tmp_path / path.name
    run.write_text(yaml.safe_dump(on_tiny_model(settings, tiny_model_dir, local_data, tmp_path / "out")))
    capsys.readouterr()
    assert train_command([str(run), *profile]) == 0, capsys.readouterr().err[-3000:]
    metrics = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "loss" in m] == [1]
    saved = {p.name for p in (tmp_path / "out").iterdir()}
    assert saved & {"model.safetensors", "adapter_model.safetensors"}  # the whole model, or a LoRA adapter
