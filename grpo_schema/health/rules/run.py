"""Rules over the run as a whole rather than its metrics: resumes that train nothing or replay data."""

from __future__ import annotations

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import finding, health_rule
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A014", "error")
def resume_trains_nothing(history: RunHistory, settings: HealthSettings):
    """a resumed run has no step left to train.

    The run resumed from a checkpoint at or past its last step (max_steps, or the epochs' steps), so it loads,
    saves and ends without training (TRL's trainer runs one step past max_steps and stops): usually max_steps
    was not raised for a continued run, or resume_from_checkpoint names the final checkpoint."""
    for event in history.events:
        if event.get("kind") != "resume":
            continue
        start, total = event.get("from_step"), event.get("total_steps")
        trained = event.get("trained_steps")
        if not isinstance(start, int) or not isinstance(total, int):
            continue
        if start >= total or trained == 0:
            past = (
                f" (the trainer still ran {trained} step{'s' if trained != 1 else ''} past it)"
                if isinstance(trained, int) and trained > 0
                else ""
            )
            yield finding(
                "GRPO-A014",
                "error",
                f"the run resumed at step {start} of {total}: it had no step left to train{past}",
                f"raise max_steps above {start} (or num_train_epochs) to continue training, or resume "
                "from an earlier checkpoint",
                steps=(start, start),
                values=[start, total],
                fields=("max_steps", "resume_from_checkpoint"),
                fix=Fix(
                    set={"max_steps": start + max(total, 1)},
                    safe=False,
                    title=f"max_steps {total} -> {start + max(total, 1)}",
                ),
                subject=str(event.get("checkpoint", "")),
            )


@health_rule("GRPO-A015", "warning")
def resume_replays_data(history: RunHistory, settings: HealthSettings):
    """a resumed run replays data it has already trained on.

    With ignore_data_skip, a run resumed from a checkpoint starts the data from the beginning instead of where
    the checkpoint stopped: the first steps see prompts again and the epoch count is off."""
    for event in history.events:
        if event.get("kind") == "resume" and event.get("ignore_data_skip") and (event.get("from_step") or 0) > 0:
            yield finding(
                "GRPO-A015",
                "warning",
                f"the run resumed at step {event['from_step']} with ignore_data_skip: it trains again on "
                "the prompts of the steps before",
                "unset ignore_data_skip so the resumed run continues the data where it stopped",
                steps=(event["from_step"], event["from_step"]),
                fields=("ignore_data_skip",),
                fix=Fix(unset=("ignore_data_skip",), safe=True, title="continue the data"),
            )
