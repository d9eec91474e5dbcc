"""Run health through the TRL callback (grpo_schema.health.trl.RunHealthCallback) fed a trainer's own state,
control and arguments, as TRL's Trainer calls it: the same verdicts as `grpo health` on the finished run, a finding
that later clears shown as cleared, and stop_on_fatal that lets an fp16 overflow skip pass but stops on a NaN
loss. (transformers, no model: the trainer states of tests/health/data.)"""

from __future__ import annotations

import io
import json
import math

from grpo_schema.health import check_run_dir
from tests.support.health_states import run_dir, state


def test_the_trl_callback_with_stop_on_fatal_skips_an_overflow_but_stops_on_a_nan_loss(tmp_path):
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from grpo_schema.health.trl import RunHealthCallback

    args = TrainingArguments(output_dir=str(tmp_path), report_to=[], fp16=True)
    records = [r for r in state("trl-1.x-fp16-overflow")["log_history"] if "loss" in r]
    callback, control, trainer_state = (
        RunHealthCallback(stop_on_fatal=True, stream=io.StringIO()),
        TrainerControl(),
        TrainerState(),
    )
    callback.on_train_begin(args, trainer_state, control)
    for record in records:
        trainer_state.global_step = record["step"]
        callback.on_log(args, trainer_state, control, logs=dict(record))
    assert not control.should_training_stop and "GRPO-A018" in callback.stream.getvalue()
    trainer_state.global_step = 81
    callback.on_log(args, trainer_state, control, logs={**records[-1], "step": 81, "loss": math.nan})
    assert control.should_training_stop and callback.stopped_at == 81


def test_the_callback_s_verdict_equals_the_batch_report_and_a_finding_that_clears_is_shown_cleared(tmp_path):
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from grpo_schema.health.trl import RunHealthCallback

    folder = run_dir(tmp_path, "trl-1.x-zero-std-and-kl")
    records = [r for r in state("trl-1.x-zero-std-and-kl")["log_history"] if "loss" in r]
    for record in records[:4]:  # a reward whose std is 0 at first, then varies: found, then cleared
        record["rewards/accuracy_reward/std"] = 0.0
    (folder / "trainer_state.json").write_text(json.dumps({**state("trl-1.x-zero-std-and-kl"), "log_history": records}))
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[])
    callback, control, trainer_state = RunHealthCallback(stream=io.StringIO()), TrainerControl(), TrainerState()
    callback.on_train_begin(args, trainer_state, control)
    for record in records:
        trainer_state.global_step = record["step"]
        callback.on_log(args, trainer_state, control, logs=dict(record))
    callback.on_train_end(args, trainer_state, control)
    batch, live = check_run_dir(folder), callback.report()
    assert [f.to_dict() for f in live.findings] == [f.to_dict() for f in batch.findings]
    assert live.verdict == batch.verdict == "unhealthy" and live.era == batch.era and live.notes == batch.notes
    assert {f.key for f in callback.reported} - {f.key for f in callback.cleared} == {f.key for f in batch.findings}
    assert [f.code for f in callback.cleared] == ["GRPO-A009"]
    assert "GRPO-A009 cleared" in callback.stream.getvalue()
