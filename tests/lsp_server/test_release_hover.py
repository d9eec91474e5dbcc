"""Hover and completion say the default, the choices and the status of the release the file is judged for, through
a real `grpo lsp` session: under `# grpo: --trl-version 0.19`, loss_type defaults to bnpo and offers what 0.19's
trainer accepts, max_prompt_length is read, and no text names a key or deprecation 0.19 lacks."""

from __future__ import annotations

import re

from grpo_schema.engine.release_texts import known_keys
from grpo_schema.versions import surface
from tests.support.lsp import line_of, open_text

TEXT = """# grpo: --trl-version 0.19
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
loss_type: grpo
max_prompt_length: 256
gradient_checkpointing: true
num_generations: 8
eval_strategy: steps
per_device_train_batch_size: 8

"""
KEYISH = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _names_lacking(text: str, version: str) -> set[str]:
    return set(KEYISH.findall(text)) & (known_keys() - set(surface(version).fields))


def test_hover_and_completion_are_the_release_s(server, tmp_path):
    uri = open_text(server, tmp_path, "old.yaml", TEXT)
    server.wait_publish(uri)

    def hover(key: str) -> str:
        return server.hover(uri, line_of(TEXT, key + ":"), 2)

    loss = hover("loss_type")
    assert "Default: `bnpo`" in loss and "dapo" not in loss, loss
    assert "expects one of bnpo, dr_grpo, grpo" in loss
    prompt = hover("max_prompt_length")
    assert "read by TRL 0.19.1" in prompt and "not read from TRL 0.28.0 on" in prompt, prompt
    assert "Default: `512`" in prompt
    checkpointing = hover("gradient_checkpointing")
    assert "activation_checkpointing" not in checkpointing and "deprecated" not in checkpointing.lower()
    for key in (
        "loss_type",
        "max_prompt_length",
        "gradient_checkpointing",
        "num_generations",
        "eval_strategy",
        "per_device_train_batch_size",
    ):
        assert _names_lacking(hover(key), "0.19") == set(), key
    values = [item["label"] for item in server.complete(uri, line_of(TEXT, "loss_type:"), len("loss_type: "))]
    assert sorted(values) == ["bnpo", "dr_grpo", "grpo"]
    keys = {item["label"]: item for item in server.complete(uri, len(TEXT.splitlines()), 0)}
    assert "torch_dtype" in keys and "dtype" not in keys and "importance_sampling_level" not in keys
    assert keys["max_completion_length"]["detail"] == "default 256"  # 0.19's (1.16 changed it)
    assert all(not _names_lacking(item["documentation"]["value"], "0.19") for item in keys.values())

    # the deprecation came with transformers 5.23's activation_checkpointing: 1.16 is judged with it, 1.8 with 5.13
    newer = open_text(server, tmp_path, "new.yaml", TEXT.replace("0.19", "1.16"))
    server.wait_publish(newer)
    said = server.hover(newer, line_of(TEXT, "gradient_checkpointing:"), 2)
    assert "Older name of activation_checkpointing" in said, said
    older = open_text(server, tmp_path, "mid.yaml", TEXT.replace("0.19", "1.8"))
    server.wait_publish(older)
    said = server.hover(older, line_of(TEXT, "gradient_checkpointing:"), 2)
    assert "Read by TRL 1.8.0" in said and "activation_checkpointing" not in said, said
