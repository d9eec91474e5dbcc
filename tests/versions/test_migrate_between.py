"""`grpo migrate --from A --to B` for any known release B >= A: renames and removals between A's and B's tables,
A's defaults that B changed written out, what B cannot keep listed, and the file's release comment and schema
modeline moved to B. Checked by judging the result as B (`grpo validate --trl-version B`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grpo_schema.cli import main
from grpo_schema.commands.export import release_names
from grpo_schema.versions import releases, surface

ROOT = Path(__file__).resolve().parents[2]

# A recipe of the TRL 0.16 era (open-r1's first GRPO recipes): vLLM on a device of its own, the script's dataset
# arguments, the old evaluation_strategy name, defaults left to 0.16 (beta 0.04, temperature 0.9, the per-sequence
# loss before loss_type existed).
RECIPE_0_16 = """\
# yaml-language-server: $schema=trl-0.16.1/grpo-config.schema.json
# grpo: --trl-version 0.16
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
model_revision: main
torch_dtype: bfloat16
attn_implementation: flash_attention_2
dataset_name: AI-MO/NuminaMath-TIR
dataset_config: default
reward_model_name_or_path: Skywork/Skywork-Reward-V2-Qwen3-0.6B
bf16: true
use_vllm: true
vllm_device: auto
vllm_gpu_memory_utilization: 0.7
evaluation_strategy: "no"
gradient_accumulation_steps: 16
gradient_checkpointing: true
learning_rate: 2.0e-05
log_level: info
logging_steps: 5
lr_scheduler_type: cosine
max_prompt_length: 512
max_completion_length: 1024
max_steps: -1
num_generations: 7
num_train_epochs: 1
output_dir: data/Qwen2.5-1.5B-Open-R1-GRPO
overwrite_output_dir: true
per_device_eval_batch_size: 7
per_device_train_batch_size: 7
push_to_hub: false
report_to:
- wandb
save_strategy: "no"
seed: 42
warmup_ratio: 0.1
"""


def migrate(path: Path, *args: str, capsys) -> tuple[int, str]:
    code = main(["migrate", str(path), *args])
    return code, capsys.readouterr().err


def judged(path: Path, version: str) -> dict:
    from grpo_schema import check_file

    return check_file(path, trl_version=version, trl_version_source="flag", world_size=1)


def test_0_16_to_0_23_keeps_the_run(tmp_path, capsys):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_0_16)
    before = judged(path, "0.16")
    assert before.valid, [d.message for d in before.diagnostics if d.severity == "error"]
    unread = judged(path, "0.23")  # 0.23 ignores what it does not read: the setting silently has no effect
    assert "vllm_device" in {f for d in unread.diagnostics if d.severity == "warning" for f in d.fields}
    code, err = migrate(path, "--from", "0.16", "--to", "0.23", "--write", capsys=capsys)
    assert code == 0, err
    assert "written for TRL 0.16 (--from); migrated to TRL 0.23.1 (--to)" in err
    assert "cannot keep: vllm_device" in err
    text = path.read_text()
    assert "vllm_device" not in text and 'eval_strategy: "no"' in text and "evaluation_strategy" not in text
    assert "torch_dtype: bfloat16" in text and "max_prompt_length: 512" in text  # 0.23 still reads both
    for line in (
        "beta: 0.04  # TRL 0.16.1's default; TRL 0.23.1's default is 0.0",
        "loss_type: grpo  # what TRL 0.16.1 did before loss_type existed; TRL 0.23.1's default is dapo",
        "temperature: 0.9  # TRL 0.16.1's default; TRL 0.23.1's default is 1.0",
        "steps_per_generation: 1  # what TRL 0.16.1 did before steps_per_generation existed",
    ):
        assert line in text, text
    assert text.startswith(
        "# yaml-language-server: $schema=trl-0.23.1/grpo-config.schema.json\n# grpo: --trl-version 0.23.1\n"
    )
    after = judged(path, "0.23")
    assert after.valid, [d.message for d in after.diagnostics if d.severity == "error"]
    assert not [d for d in after.diagnostics if d.code.startswith("GRPO-K")]  # every key is one 0.23 reads
    # the same run: what 0.16 did with the file left alone, 0.23 does with the migrated one
    for key in (
        "beta",
        "temperature",
        "loss_type",
        "scale_rewards",
        "top_k",
        "max_completion_length",
        "gradient_checkpointing",
        "learning_rate",
        "num_generations",
        "dtype",
    ):
        assert getattr(after.config, key) == getattr(before.config, key), key
    assert (after.plan.generation_batch_size, after.plan.steps_per_generation) == (
        before.plan.generation_batch_size,
        before.plan.steps_per_generation,
    )


def test_0_16_to_1_16_is_the_default_target(tmp_path, capsys):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_0_16)
    code, err = migrate(path, "--write", capsys=capsys)  # --from: the file's comment
    assert "written for TRL 0.16 (the file's `# grpo: --trl-version` comment); migrated to TRL 1.16" in err, err
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=grpo-config.schema.json\n# grpo: --trl-version 1.16\n")
    assert judged(path, "1.16").valid
    assert code == 0


def test_to_the_same_release_changes_nothing_but_what_it_does_not_read(tmp_path, capsys):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_0_16)
    code, err = migrate(path, "--from", "0.16", "--to", "0.16.1", capsys=capsys)
    assert code == 0 and "migrated to TRL 0.16.1" in err  # no diff: nothing to do


@pytest.mark.parametrize("target", ["0.19", "0.23", "0.29", "1.8"])
def test_every_later_release_gets_a_file_valid_for_it(tmp_path, capsys, target):
    path = tmp_path / "recipe.yaml"
    path.write_text(RECIPE_0_16)
    code, err = migrate(path, "--from", "0.16", "--to", target, "--write", capsys=capsys)
    assert code == 0, err
    result = judged(path, target)
    assert result.valid, [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]
    assert result.config.beta == 0.04 and result.config.temperature == 0.9


def test_the_catalogue_and_the_editor_docs_list_every_release_schema():
    folders = sorted(p.name for p in (ROOT / "schemas").glob("trl-*") if p.is_dir())
    names = release_names()
    assert sorted(n.split("/")[0] for n in names) == folders  # no folder for a release the tables dropped
    catalog = json.loads((ROOT / "schemas" / "catalog.json").read_text())
    versions = catalog["schemas"][0]["versions"]
    assert {k: v for k, v in versions.items() if k.startswith("trl-")} == {n.split("/")[0]: n for n in names}
    docs = (ROOT / "docs" / "editors.md").read_text()
    assert all(f"`{name}`" in docs for name in names)
    for release in releases():  # every release names the schema of the table it is judged by
        from grpo_schema.commands.export import release_schema_name

        expected = (
            "grpo-config.schema.json"
            if surface(release).release == surface("1.16").release
            else f"trl-{surface(release).release}/grpo-config.schema.json"
        )
        assert release_schema_name(release) == expected
        assert re.match(r"^(trl-[\d.]+/)?grpo-config\.schema\.json$", expected)


@pytest.mark.parametrize(
    "version, schema",
    [
        ("0.19", "trl-0.19.1/grpo-config.schema.json"),
        ("1.12", "trl-1.11.0/grpo-config.schema.json"),  # 1.11 and 1.12 read the same keys (same transformers)
        ("1.16", "grpo-config.schema.json"),
    ],
)
def test_grpo_schema_for_a_release_names_its_modeline(capsys, version, schema):
    assert main(["schema", "--trl-version", version]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["title"].lower().startswith(("grpo-config", "grpo training config"))
    assert f"# yaml-language-server: $schema={schema}" in captured.err
    if schema.startswith("trl-"):  # the file it names is the one committed
        assert (ROOT / "schemas" / schema).read_text() == captured.out
