"""Choice-like keys judged with the judged release's own value lists (its table: the enums of its transformers,
TRL's own Literals), not TRL 1.16's: a value the release accepts is never refused, one it lacks is GRPO-T003 naming
the release's values, with a did-you-mean and a fix from them. No release's parser runs here (the oracle,
test_release_value_lists.py, holds these tables to the real parsers)."""

from __future__ import annotations

from grpo_schema.engine.check import check_mapping
from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.release import release_surface
from grpo_schema.engine.release_choices import accepted_values, choice_refused, kept_for_release
from grpo_schema.versions import releases, surface

BASE = {"model_name_or_path": "Qwen/Qwen2.5-0.5B", "dataset_name": "trl-lib/tldr", "output_dir": "out"}


def choice_errors(release: str, **keys) -> list:
    result = check_mapping({**BASE, **keys}, trl_version=release)
    return [d for d in result.diagnostics if d.code == "GRPO-T003"]


def test_every_value_of_a_release_s_table_is_accepted_at_that_release():
    """Every value every table lists for every choice-like key is one the release's check lets through, and the
    values 1.16's types cannot hold are kept as written."""
    facts = compiled("config").fields
    kept = set()
    for name in releases():
        release = surface(name)
        for key, info in release.fields.items():
            allowed = accepted_values(key, release) or ()
            for value in info.choices or ():
                if isinstance(value, str) and key not in release.choices:
                    assert choice_refused(key, value, release) is None, (name, key, value)
                    if kept_for_release(key, value, release, facts.get(key)):
                        kept.add((key, value))
                assert not allowed or not isinstance(value, str) or key in release.choices or value in allowed
    assert {("optim", "adamw_hf"), ("optim", "adamw_apex_fused"), ("ddp_backend", "ccl")} <= kept


def test_an_optimizer_only_an_older_transformers_has_is_accepted_and_held():
    assert choice_errors("0.14", optim="adamw_hf") == []
    assert check_mapping({**BASE, "optim": "adamw_hf"}, trl_version="0.14").config.optim == "adamw_hf"
    assert choice_errors("0.16", optim="adamw_apex_fused") == []
    assert choice_errors("0.16", ddp_backend="ccl") == []


def test_a_value_the_release_lacks_is_refused_with_its_own_names():
    (said,) = choice_errors("0.16", lr_scheduler_type="cosine_warmup_with_min_lr", lr_scheduler_kwargs={"min_lr": 0})
    assert "TRL 0.16.1 accepts with transformers 4.50.3" in said.message and "warmup_stable_decay" in said.message
    assert said.hint == "did you mean cosine_with_min_lr?" and said.fix.set == {
        "lr_scheduler_type": "cosine_with_min_lr"
    }
    (said,) = choice_errors("0.16", optim="adamw_hf")  # 4.50 had dropped it already
    assert "41 names TRL 0.16.1 accepts" in said.message
    assert said.fix.set["optim"] in surface("0.16").fields["optim"].choices
    (said,) = choice_errors("0.19", optim="stable_adamw")  # came with a later transformers
    assert said.fix is None or said.fix.set["optim"] in surface("0.19").fields["optim"].choices
    (said,) = choice_errors("1.8", optim="adamw_apex_fused")  # gone from 1.8's transformers
    assert "TRL 1.8.0 accepts with transformers 5.13.0" in said.message


def test_release_only_keys_are_held_to_their_value_lists():
    """evaluation_strategy (0.14-0.16) is read only by those releases: its IntervalStrategy still applies."""
    (said,) = choice_errors("0.16", evaluation_strategy="sometimes")
    assert said.fields == ("evaluation_strategy",) and "no, steps, epoch" in said.message
    assert choice_errors("0.16", evaluation_strategy="steps", eval_steps=10) == []


def test_trl_16_judges_with_its_own_lists_as_before():
    assert release_surface("1.16") is None
    (said,) = choice_errors("1.16", optim="adamw_apex_fused")
    assert said.message.startswith("optim must be one of 41 names") and "TRL" not in said.message
    assert choice_errors("1.16", optim="stable_adamw", lr_scheduler_type="cosine_warmup_with_min_lr") == []


def test_a_backend_name_the_release_only_documents_is_a_warning_and_the_file_stays_valid():
    """half_precision_backend (up to TRL 0.26) is a plain string whose names transformers only documents: the
    release's parser takes 'cuda_amp' and its Trainer, comparing with auto/apex/cpu_amp, does nothing with it. That
    is GRPO-T014, a warning naming the release's names, never a refusal; a key 1.16 reads (ddp_backend) keeps
    GRPO-T003."""
    keys = {"half_precision_backend": "cuda_amp", "reward_funcs": ["think_format_reward"]}
    result = check_mapping({**BASE, **keys}, trl_version="0.19.1")
    (said,) = [d for d in result.diagnostics if "half_precision_backend" in d.fields]
    assert (said.code, said.severity) == ("GRPO-T014", "warning")
    assert "auto, apex, cpu_amp" in said.message and "TRL 0.19.1" in said.message
    assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
    assert [d.code for d in choice_errors("0.19.1", ddp_backend="bogus")] == ["GRPO-T003"]
