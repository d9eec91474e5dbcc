"""grpo_schema never imports torch, and `grpo validate` pays nothing for explain, fixes or migrate."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

MODULES = (
    "grpo_schema",
    "grpo_schema.commands.explain",
    "grpo_schema.engine.schedule",
    "grpo_schema.engine.fixes",
    "grpo_schema.commands.migrate",
    "grpo_schema.commands.matrix",
    "grpo_schema.commands.autofix",
    "grpo_schema.engine.yamledit",
    "grpo_schema.render.explain_text",
)


def loaded_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    return set(done.stdout.split())


def test_no_torch_anywhere_in_the_schema_side():
    modules = loaded_after("\n".join(f"import {m}" for m in MODULES))
    assert not {"torch", "transformers", "trl", "accelerate"} & modules


def test_validating_a_valid_file_loads_none_of_the_new_modules(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("num_generations: 4\nper_device_train_batch_size: 4\n")
    modules = loaded_after(f"from grpo_schema.cli import main\nmain(['validate', {str(path)!r}])")
    assert (
        not {
            "grpo_schema.engine.fixes",
            "grpo_schema.commands.explain",
            "grpo_schema.commands.migrate",
            "ruamel",
            "ruamel.yaml",
        }
        & modules
    )
