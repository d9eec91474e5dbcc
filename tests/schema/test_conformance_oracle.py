"""The facts behind tests/schema/test_conformance.py, checked against TRL 1.16 and its libraries themselves.

Each case feeds the same YAML to `trl grpo`'s own parser (TrlParser of trl/scripts/grpo.py, as `trl grpo --config`
runs it) or calls the library function TRL calls, and compares with what `grpo validate` says. ~10 s.
"""

from __future__ import annotations

import os

import pytest

trl = pytest.importorskip("trl", reason="TRL 1.16 is a test-only oracle (pip install -e '.[test]')")

from tests.schema.helpers import check, codes  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

BASE = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"
# Machine-only settings neutralised, as the corpus was measured.
PARSER_BASE = BASE + "use_cpu: true\nreport_to: none\nper_device_train_batch_size: 8\n"


def trl_parse(tmp_path, body: str):
    """(script_args, training_args, model_args, dataset_args) from `trl grpo`'s parser, or the exception."""
    from trl.scripts.grpo import make_parser

    path = tmp_path / "config.yaml"
    path.write_text(PARSER_BASE + f"output_dir: {tmp_path / 'out'}\n" + body)
    try:
        return make_parser().parse_args_and_config(["--config", str(path)], fail_with_unknown_args=False)
    except (SystemExit, ValueError) as exc:
        return exc


def test_quoted_scale_rewards_stays_a_string_in_trl(tmp_path):
    parsed = trl_parse(tmp_path, 'scale_rewards: "False"\n')
    assert parsed[1].scale_rewards == "False"  # not a mode: the trainer raises at the first step
    assert "GRPO-T010" in codes(check(BASE + 'scale_rewards: "False"\n'))
    assert trl_parse(tmp_path, "scale_rewards: false\n")[1].scale_rewards == "none"


def test_quoted_resume_flag_stays_a_path_in_trl(tmp_path):
    assert trl_parse(tmp_path, 'resume_from_checkpoint: "false"\n')[1].resume_from_checkpoint == "false"


def test_include_num_input_tokens_seen_is_a_boolean_option_in_trl_grpo(tmp_path):
    assert trl_parse(tmp_path, 'include_num_input_tokens_seen: "False"\n')[1].include_num_input_tokens_seen == "no"
    assert isinstance(trl_parse(tmp_path, "include_num_input_tokens_seen: non_padding\n"), SystemExit)
    assert codes(check(BASE + "include_num_input_tokens_seen: non_padding\n"), "error") == ["GRPO-T012"]


def test_max_steps_makes_any_epoch_count_acceptable(tmp_path):
    parsed = trl_parse(tmp_path, "num_train_epochs: -1\nmax_steps: 10\n")
    assert not isinstance(parsed, BaseException) and parsed[1].max_steps == 10
    assert check(BASE + "num_train_epochs: -1\nmax_steps: 10\n").valid


def test_env_values_are_set_with_str(tmp_path):
    names = ("GRPO_CONFORMANCE_NUMBER", "GRPO_CONFORMANCE_FLAG")
    try:
        trl_parse(tmp_path, f"env:\n  {names[0]}: 1\n  {names[1]}: false\n")
        assert (os.environ[names[0]], os.environ[names[1]]) == ("1", "False")
    finally:
        for name in names:
            os.environ.pop(name, None)
    assert check(BASE + f"env:\n  {names[0]}: 1\n  {names[1]}: false\n").valid


def test_constant_schedules_drop_kwargs_and_others_refuse_unknown_ones():
    import torch
    from transformers import get_scheduler

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    for name in ("constant", "constant_with_warmup"):
        get_scheduler(
            name, optimizer, num_warmup_steps=1, num_training_steps=10, scheduler_specific_kwargs={"num_cycles": 0.5}
        )
    with pytest.raises(TypeError):
        get_scheduler(
            "cosine", optimizer, num_warmup_steps=1, num_training_steps=10, scheduler_specific_kwargs={"foo": 1}
        )


def test_datasets_refuses_loading_scripts_and_streamed_splits(monkeypatch):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="Dataset scripts are no longer supported"):
        datasets.load_dataset("/nonexistent/loader.py")
    assert not hasattr(datasets.IterableDataset, "train_test_split")


def test_grpo_trainer_refuses_an_adapter_on_lm_head():
    import inspect

    from trl import GRPOTrainer

    # Building a PEFT model is heavy; the refusal is a plain check on the output embeddings in __init__.
    assert "Applying a PEFT adapter to `lm_head` is not supported" in inspect.getsource(GRPOTrainer.__init__)
