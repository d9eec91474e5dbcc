"""Every example declares its hardware (a `hardware:` section) and fits it, as `grpo plan` models the engine that
would run it (TRL 1.16's GRPOTrainer, and grpo_runtime for the form and `grpo launch`)."""

import json
from pathlib import Path

import pytest

from grpo_schema.commands.plan import check_for_hardware
from grpo_schema.engine.hardware.fit import section_of
from grpo_schema.engine.infile import read_file_settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))


def _profiles(text: str) -> list:
    from grpo_schema.engine.check import resolve_profiles

    names = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# profile:")]
    return resolve_profiles(names)


def _demo_model(cwd: Path) -> None:
    """demo/model as `grpo demo demo` writes it (grpo_runtime.model.tiny: hidden 64, 2 layers, 4 heads)."""
    from tests.support.tiny import VOCABULARY

    (cwd / "demo" / "model").mkdir(parents=True)
    (cwd / "demo" / "model" / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "num_key_value_heads": 4,
                "vocab_size": len(VOCABULARY),
                "tie_word_embeddings": False,
                "torch_dtype": "float32",
            }
        )
    )


@pytest.mark.parametrize("engine", ["trl", "grpo_runtime"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example_fits_its_declared_hardware(path, engine, tmp_path, monkeypatch):
    text = path.read_text()
    if path.stem == "demo":
        _demo_model(tmp_path)
        monkeypatch.chdir(tmp_path)
    declared = read_file_settings(text).hardware  # a `# grpo: --hardware SPEC` comment, as the demo's
    result, report = check_for_hardware(
        text, str(path), declared, profiles=_profiles(text), engine=engine, batch_fixes=False
    )
    assert section_of(result).get("spec") or declared, f"{path.name} declares no hardware (section or comment)"
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    errors = [d.message for d in report.diagnostics if d.severity == "error" or d.code in ("GRPO-H002",)]
    assert report.fits is True and not errors, (
        path.name,
        errors,
        report.memory and round(report.memory.total / 2**30, 1),
    )
    assert report.memory.total <= 0.95 * report.capacity  # a margin, not a coin toss
