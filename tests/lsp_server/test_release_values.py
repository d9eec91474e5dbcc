"""The editor judges and completes a choice-like key with the judged release's own value list (the optimizers and
schedules of its transformers), through a real `grpo lsp` session: under `# grpo: --trl-version 0.14` adamw_hf is
offered and accepted and stable_adamw is neither; under 0.16 a schedule its transformers lacks is GRPO-T003 with a
fix to one it has."""

from __future__ import annotations

from tests.support.lsp import line_of, open_text

TEXT = """# grpo: --trl-version {release}
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/tldr
output_dir: out
optim: {optim}
lr_scheduler_type: {schedule}
"""


def test_completion_and_diagnostics_use_the_release_s_value_lists(server, tmp_path):
    text = TEXT.format(release="0.14", optim="adamw_hf", schedule="cosine")
    uri = open_text(server, tmp_path, "old.yaml", text)
    published = server.wait_publish(uri)
    assert [d for d in published if d["code"] == "GRPO-T003"] == []
    offered = [item["label"] for item in server.complete(uri, line_of(text, "optim:"), len("optim: "))]
    assert "adamw_hf" in offered and "stable_adamw" not in offered
    schedules = [item["label"] for item in server.complete(uri, line_of(text, "lr_scheduler_type:"), 19)]
    assert "cosine_with_min_lr" in schedules and "cosine_warmup_with_min_lr" not in schedules

    text = TEXT.format(release="0.16", optim="adamw_torch", schedule="cosine_warmup_with_min_lr")
    uri = open_text(server, tmp_path, "mid.yaml", text)
    (said,) = [d for d in server.wait_publish(uri) if d["code"] == "GRPO-T003"]
    assert said["range"]["start"]["line"] == line_of(text, "lr_scheduler_type:")
    assert "TRL 0.16.1 accepts with transformers 4.50.3" in said["message"]
