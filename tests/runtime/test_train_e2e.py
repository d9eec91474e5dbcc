"""End to end on CPU: a few optimizer steps of the tiny model through grpo_runtime.train.main."""

import json

import pytest
import torch
import yaml
from safetensors.torch import load_file

from grpo_runtime.train import main
from grpo_schema import check_file

from .helpers import base_settings, read_metrics, validated, write_prompts

pytestmark = pytest.mark.slow


def weights(directory):
    return load_file(str(directory / "model.safetensors"))


def test_training_changes_weights_and_writes_outputs(tmp_path, tiny_model_dir):
    out = tmp_path / "out"
    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), out)
    settings.update(gradient_accumulation_steps=2, beta=0.04, loss_type="grpo")
    result = validated(settings)
    progress = main(result.config, result.plan)

    assert progress.global_step == 4 and progress.micro_step == 8
    before, after = weights(tiny_model_dir), weights(out)
    assert any(not torch.equal(before[name], after[name]) for name in before)
    records = read_metrics(out)
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    required = {
        "step",
        "loss",
        "reward",
        "reward_std",
        "kl",
        "completions/mean_length",
        "learning_rate",
        "entropy",
        "grad_norm",
        "clip_ratio/region_mean",
        "frac_reward_zero_std",
        "num_tokens",
        "step_time",
        "rewards/target_word_reward/mean",
    }
    assert required <= set(records[0]), required - set(records[0])
    assert all(r["learning_rate"] == pytest.approx(0.01 * (1 - (r["step"] - 1) / 4)) for r in records)
    assert records[-1]["num_tokens"] > records[0]["num_tokens"] > 0
    for step in (2, 4):
        checkpoint = out / f"checkpoint-{step}"
        assert (checkpoint / "optimizer.pt").exists() and (checkpoint / "model.safetensors").exists()
    saved = yaml.safe_load((out / "grpo_config.yaml").read_text())
    assert saved["model_name_or_path"] == str(tiny_model_dir) and saved["gradient_accumulation_steps"] == 2
    # the resolved config is itself a config for `grpo validate` and editors (modeline first) that reads back
    # as the same config
    assert (out / "grpo_config.yaml").read_text().startswith("# yaml-language-server: $schema=")
    resolved = check_file(out / "grpo_config.yaml")
    assert resolved.valid and resolved.config == result.config


def run(tmp_path, tiny_model_dir, name, **overrides):
    out = tmp_path / name
    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), out)
    settings.update(overrides)
    result = validated(settings)
    main(result.config, result.plan)
    return out


@pytest.mark.parametrize(
    "geometry",
    [
        # one generation feeds 4 optimizer steps (s*mu = 4 > GA = 1): the checkpoint falls mid-buffer
        dict(
            steps_per_generation=2,
            num_iterations=2,
            gradient_accumulation_steps=1,
            max_steps=7,
            save_steps=3,
            beta=0.05,
            sync_ref_model=True,
            ref_model_sync_steps=2,
            loss_type="dapo",
        ),
        # 16 prompts / 2 per generation: epochs of 8 steps, so resuming at 6 crosses an epoch boundary
        dict(
            gradient_accumulation_steps=2,
            max_steps=10,
            save_steps=6,
            loss_type="grpo",
            lr_scheduler_type="cosine",
            warmup_steps=0.2,
            weight_decay=0.1,
        ),
    ],
)
def test_resumed_run_reaches_the_same_weights(tmp_path, tiny_model_dir, geometry):
    full = run(tmp_path, tiny_model_dir, "full", **geometry)
    checkpoint = full / f"checkpoint-{geometry['save_steps']}"
    resumed = run(tmp_path, tiny_model_dir, "resumed", resume_from_checkpoint=str(checkpoint), **geometry)

    a, b = weights(full), weights(resumed)
    assert all(torch.equal(a[name], b[name]) for name in a)
    tail = [r for r in read_metrics(full) if r["step"] > geometry["save_steps"]]
    again = read_metrics(resumed)
    assert [r["step"] for r in again] == [r["step"] for r in tail]
    for x, y in zip(tail, again):  # identical logs too, except wall-clock times (step_time, rewards/NAME/seconds)
        clock = {k for k in x if k == "step_time" or k.endswith("/seconds")}
        assert {k: v for k, v in x.items() if k not in clock} == {k: v for k, v in y.items() if k not in clock}


def test_a_fresh_run_replaces_old_logs(tmp_path, tiny_model_dir):
    first = run(tmp_path, tiny_model_dir, "out", max_steps=2)
    second = run(tmp_path, tiny_model_dir, "out", max_steps=3)
    assert first == second and [r["step"] for r in read_metrics(second)] == [1, 2, 3]
    assignments = (second / "prompt_assignment" / "rank-0.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in assignments] == [0, 1, 2]


def test_report_to_tensorboard_writes_event_files(tmp_path, tiny_model_dir):
    pytest.importorskip("tensorboard", reason="report_to tensorboard needs the tensorboard package")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = run(tmp_path, tiny_model_dir, "tb", max_steps=2, report_to=["tensorboard"])
    events = EventAccumulator(str(out / "runs")).Reload()
    assert [e.step for e in events.Scalars("train/reward")] == [1, 2]
    assert len(events.Scalars("train/loss")) == 2


def test_report_to_skips_what_it_cannot_write_and_says_so():
    from grpo_runtime.outputs.reporters import requested_reporters
    from grpo_runtime.support import assess
    from grpo_schema import check_text

    assert requested_reporters("none") == [] and requested_reporters(None) == []
    has_tensorboard = __import__("importlib").util.find_spec("tensorboard") is not None
    written = ["tensorboard"] if has_tensorboard else []  # metrics.jsonl has everything
    assert requested_reporters(["mlflow", "tensorboard"]) == written
    result = check_text(
        "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nreport_to: [mlflow, tensorboard]\n"
    )
    warned = [d for d in assess(result) if "report_to" in d.fields and d.code == "GRPO-U007"]
    assert "mlflow" in warned[0].message and len(warned) == (1 if has_tensorboard else 2)  # + "not installed"


def test_bf16_autocast_and_save_total_limit(tmp_path, tiny_model_dir):
    out = run(tmp_path, tiny_model_dir, "bf16", bf16=True, max_steps=3, save_steps=1, save_total_limit=2, beta=0.04)
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-3"]
    records = read_metrics(out)
    assert len(records) == 3 and all(r["loss"] is not None and r["kl"] is not None for r in records)
    assert yaml.safe_load((out / "grpo_config.yaml").read_text())["bf16"] is True


def test_resume_target_resolution(tmp_path):
    from grpo_runtime.outputs.checkpoint import STATE_FILE, resolve_resume

    assert resolve_resume(None, tmp_path) is None
    with pytest.raises(ValueError, match="holds no complete checkpoint"):
        resolve_resume(True, tmp_path)
    (tmp_path / "checkpoint-10").mkdir()
    (tmp_path / "checkpoint-9").mkdir()
    (tmp_path / "checkpoint-10" / "trainer_state.json").write_text("{}")  # what an HF/TRL checkpoint holds
    with pytest.raises(ValueError, match="not a complete checkpoint folder written by grpo_runtime"):
        resolve_resume(str(tmp_path / "checkpoint-10"), tmp_path)
    with pytest.raises(ValueError, match="holds no complete checkpoint"):
        resolve_resume("true", tmp_path)
    (tmp_path / "checkpoint-9" / STATE_FILE).write_text("{}")
    assert resolve_resume(str(tmp_path / "checkpoint-9"), tmp_path) == tmp_path / "checkpoint-9"
    # newest complete one by step, not by name: checkpoint-10 is not ours, checkpoint-11 was cut short while its
    # state file was being written (only the temporary file exists)
    (tmp_path / "checkpoint-11").mkdir()
    (tmp_path / "checkpoint-11" / f"{STATE_FILE}.partial").write_text('{"global_st')
    assert resolve_resume("true", tmp_path) == tmp_path / "checkpoint-9"


def test_the_state_file_is_written_atomically_and_a_broken_one_is_reported(tmp_path):
    from grpo_runtime.outputs.checkpoint import STATE_FILE, CheckpointError, read_progress, write_atomically

    write_atomically(tmp_path / STATE_FILE, '{"global_step": 3}')
    assert read_progress(tmp_path).global_step == 3
    assert [p.name for p in tmp_path.iterdir()] == [STATE_FILE]  # no temporary file left behind
    (tmp_path / STATE_FILE).write_text("")  # what a kill during a plain write could leave
    with pytest.raises(CheckpointError, match="unreadable runtime_state.json"):
        read_progress(tmp_path)


def test_grpo_train_reports_an_unusable_resume_target_without_a_traceback(tmp_path, tiny_model_dir, capsys):
    from grpo_runtime.launch.cli import train_command

    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), tmp_path / "out")
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({**settings, "resume_from_checkpoint": True}))
    assert train_command([str(config)]) == 3  # valid, but this run cannot start as written
    err = capsys.readouterr().err
    assert "holds no complete checkpoint" in err and "Traceback" not in err


def test_epoch_based_length_logging_and_saving(tmp_path, tiny_model_dir):
    """16 prompts, 2 per generation, GA=3: 8 micro-steps per epoch in windows of 3, 3, 2 -> 3 steps per epoch."""
    out = run(
        tmp_path,
        tiny_model_dir,
        "epochs",
        per_device_train_batch_size=8,
        gradient_accumulation_steps=3,
        steps_per_generation=1,
        max_steps=-1,
        num_train_epochs=2,
        logging_strategy="epoch",
        save_strategy="epoch",
    )
    records = read_metrics(out)
    assert [(r["step"], r["epoch"]) for r in records] == [(3, 1.0), (6, 2.0)]
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-3", "checkpoint-6"]


def test_log_completions_writes_every_completion_with_its_rewards(tmp_path, tiny_model_dir):
    out = run(tmp_path, tiny_model_dir, "completions", max_steps=2, log_completions=True)
    lines = [json.loads(x) for x in (out / "completions.jsonl").read_text().splitlines()]
    assert len(lines) == 2 * 4 and {x["step"] for x in lines} == {0, 1}
    assert set(lines[0]["rewards"]) == {"target_word_reward"} and lines[0]["prompt"][0]["role"] == "user"
    assert isinstance(lines[0]["completion"][0]["content"], str)
    for line in lines:
        assert line["reward"] == pytest.approx(line["rewards"]["target_word_reward"])
        assert 0 < line["length"] <= 4 and isinstance(line["truncated"], bool) and "advantage" in line
    assert not (out / "completions-sample.jsonl").exists()


def test_without_log_completions_a_small_sample_is_kept(tmp_path, tiny_model_dir):
    out = run(tmp_path, tiny_model_dir, "sample", max_steps=2)
    assert not (out / "completions.jsonl").exists()
    lines = [json.loads(x) for x in (out / "completions-sample.jsonl").read_text().splitlines()]
    assert lines and {x["step"] for x in lines} <= {0, 1}
    assert {"step", "prompt", "completion", "rewards", "reward", "advantage", "length", "truncated"} <= set(lines[0])


def test_resume_values_that_mean_no_resume_start_fresh_in_any_case(tmp_path):
    from grpo_runtime.outputs.checkpoint import resolve_resume

    for value in (None, False, "", "false", "FALSE", "False"):
        assert resolve_resume(value, tmp_path) is None
    with pytest.raises(ValueError, match="holds no complete checkpoint"):
        resolve_resume("TRUE", tmp_path)


def eval_run(tmp_path, tiny_model_dir, name, **overrides):
    """A run that evaluates (and saves) after every step, on a folder with train and test files."""
    data = tmp_path / "split"
    if not data.exists():
        write_prompts(data / "train.jsonl")
        write_prompts(data / "test.jsonl")
    settings = dict(
        eval_strategy="steps",
        eval_steps=1,
        per_device_eval_batch_size=4,
        max_steps=3,
        save_steps=1,
        reward_funcs=["tests.runtime.test_field_sweep.token_reward"],
    )  # varies in every group
    return run(tmp_path, tiny_model_dir, name, dataset_name=str(data), **{**settings, **overrides})


def state(checkpoint):
    return json.loads((checkpoint / "runtime_state.json").read_text())


def test_load_best_model_at_end_restores_the_best_checkpoint_and_keeps_it_alone(tmp_path, tiny_model_dir):
    # num_tokens only grows, so with "lower is better" the first evaluation stays the best
    out = eval_run(
        tmp_path,
        tiny_model_dir,
        "best",
        metric_for_best_model="num_tokens",
        greater_is_better=False,
        load_best_model_at_end=True,
        save_total_limit=1,
    )
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1"]  # save_total_limit 1: the best only
    best = state(out / "checkpoint-1")
    assert best["best_global_step"] == 1 and best["best_model_checkpoint"] == str(out / "checkpoint-1")
    final, first = weights(out), weights(out / "checkpoint-1")
    assert all(torch.equal(final[k], first[k]) for k in final)
    last = eval_run(tmp_path, tiny_model_dir, "last", save_total_limit=1)
    assert not all(torch.equal(final[k], weights(last)[k]) for k in final)  # three steps moved the weights on
    assert sorted(p.name for p in last.glob("checkpoint-*")) == ["checkpoint-3"]


def test_save_strategy_best_saves_on_each_new_best_only(tmp_path, tiny_model_dir):
    never_better = eval_run(
        tmp_path,
        tiny_model_dir,
        "lower",
        save_strategy="best",
        metric_for_best_model="num_tokens",
        greater_is_better=False,
    )
    assert sorted(p.name for p in never_better.glob("checkpoint-*")) == ["checkpoint-1"]
    always_better = eval_run(
        tmp_path, tiny_model_dir, "higher", save_strategy="best", metric_for_best_model="eval_num_tokens"
    )  # greater is better for a non-loss name
    assert sorted(p.name for p in always_better.glob("checkpoint-*")) == [f"checkpoint-{i}" for i in (1, 2, 3)]
    tokens = [m["eval_num_tokens"] for m in read_metrics(always_better) if "eval_num_tokens" in m]
    assert state(always_better / "checkpoint-3")["best_metric"] == tokens[-1] > tokens[0]


def test_pruning_keeps_the_newest_and_the_best_checkpoint(tmp_path):
    from grpo_runtime.outputs.checkpoint import prune_checkpoints

    for step in (1, 2, 3, 4):
        (tmp_path / f"checkpoint-{step}").mkdir()
    prune_checkpoints(tmp_path, 1, best=str(tmp_path / "checkpoint-2"))
    assert sorted(p.name for p in tmp_path.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    prune_checkpoints(tmp_path, 1)
    assert sorted(p.name for p in tmp_path.glob("checkpoint-*")) == ["checkpoint-4"]


def test_an_unknown_best_metric_stops_the_run_with_the_metrics_it_could_name(tmp_path, tiny_model_dir, capsys):
    from grpo_runtime.launch.cli import train_command

    data = tmp_path / "split"
    write_prompts(data / "train.jsonl")
    write_prompts(data / "test.jsonl")
    settings = base_settings(tiny_model_dir, data, tmp_path / "out")
    settings.update(
        eval_strategy="steps", eval_steps=1, per_device_eval_batch_size=4, max_steps=2, metric_for_best_model="accuracy"
    )
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(settings))
    assert train_command([str(path)]) == 3
    err = capsys.readouterr().err
    assert "metric_for_best_model is 'accuracy', but the evaluation has no 'eval_accuracy'" in err
    assert "eval_reward" in err and "Traceback" not in err


def test_a_missing_split_is_named_without_a_traceback(tmp_path, tiny_model_dir, capsys):
    from grpo_runtime.launch.cli import train_command

    data = tmp_path / "only-train"
    write_prompts(data / "train.jsonl")
    settings = base_settings(tiny_model_dir, data, tmp_path / "out")
    settings.update(eval_strategy="steps", per_device_eval_batch_size=4)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(settings))
    assert train_command([str(path)]) == 3
    err = capsys.readouterr().err
    assert f"dataset {data} has no split 'test'" in err and "Traceback" not in err

    from datasets import Dataset, DatasetDict  # a DatasetDict.save_to_disk folder without a test split

    saved = tmp_path / "saved"
    DatasetDict(train=Dataset.from_list([{"prompt": "say cat", "target": "cat"}] * 8)).save_to_disk(str(saved))
    path.write_text(yaml.safe_dump({**settings, "dataset_name": str(saved)}))
    assert train_command([str(path)]) == 3
    err = capsys.readouterr().err
    assert f"dataset {saved} has no split 'test' (it has train)" in err and "Traceback" not in err


def test_activation_checkpointing_trains_to_the_same_weights(tmp_path, tiny_model_dir):
    # recomputing activations in backward changes memory, not numbers; generation switches it off and on again
    # (also run in the vLLM environment, whose transformers names the switch gradient_checkpointing_enable)
    varied = dict(max_steps=2, reward_funcs=["tests.runtime.test_field_sweep.token_reward"])
    plain = run(tmp_path, tiny_model_dir, "plain", **varied)
    recomputed = run(
        tmp_path,
        tiny_model_dir,
        "recomputed",
        activation_checkpointing=True,
        activation_checkpointing_kwargs={"use_reentrant": False},
        **varied,
    )
    a, b = weights(plain), weights(recomputed)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert not all(torch.equal(a[k], weights(tiny_model_dir)[k]) for k in a)
