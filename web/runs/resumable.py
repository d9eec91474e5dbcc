"""Whether a finished run can be resumed, and why not: one rule for POST .../resume, a launch with
existing_output=resume, the runs page's Resume button and the form's choices when an output_dir is taken.

A resume that starts at or past the run's last step trains nothing (run health's GRPO-A014 says so after the fact);
it is refused up front with the same words and its fix: raise max_steps above the checkpoint's step.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.words import plural
from grpo_schema.engine.yamledit import apply_fix_to_text
from grpo_web.runs import outputs
from grpo_web.runs.store import Run, Store


@functools.lru_cache(maxsize=256)
def max_steps(config_text: str) -> int | None:
    """max_steps from a config's text (YAML or JSON), None when it trains by epochs."""
    loaded = load_yaml(config_text)
    value = loaded.data.get("max_steps") if loaded.ok and isinstance(loaded.data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def logged_step(store: Store, run: Run) -> int | None:
    """The last step the run logged (a run that trained by epochs ended there)."""
    latest = store.latest_metrics(run.id)
    step = latest.get("step") if latest else None
    return step if isinstance(step, int) else None


@dataclass(frozen=True)
class Resumable:
    possible: bool
    reason: str | None = None  # why not, as the refusal says it
    checkpoint: str | None = None  # the checkpoint a resume starts from (its folder name)
    step: int | None = None  # that checkpoint's step
    total_steps: int | None = None  # the steps the resumed run would train to
    max_steps: int | None = None  # the max_steps that would give it steps to train (the fix), when none are left
    instead: str | None = None  # the run to resume instead: the newest of the line, when this run has a successor

    def to_dict(self) -> dict:
        return {
            "possible": self.possible,
            "reason": self.reason,
            "checkpoint": self.checkpoint,
            "step": self.step,
            "total_steps": self.total_steps,
            "max_steps": self.max_steps,
            "instead": self.instead,
        }


def verdict(store: Store, run: Run, config_text: str | None = None) -> Resumable:
    """judge() with what the store knows: the run's last logged step and the newest run of its line."""
    newest = store.newest_of_line(run) if run.resumed_by else None
    return judge(run, logged_step(store, run), config_text, newest)


def judge(run: Run, last_step: int | None, config_text: str | None = None, newest: Run | None = None) -> Resumable:
    """Can `run`'s output_dir be resumed by a run of `config_text` (default: the run's own config)?

    `last_step` is the last step the run logged: for a run that succeeded by epochs (no max_steps), the steps it
    had to train. Nothing is left when the run succeeded and its last complete checkpoint is at or past the steps
    the config trains. A run that was resumed already (`newest`: the last run of its line) is refused: its
    output_dir holds its successor's checkpoints, which a second resume would start from as if they were its own."""
    if run.resumed_by:
        newest_id = newest.id if newest else run.resumed_by
        then = "" if newest_id == run.resumed_by else f", and the newest run of that line is run {newest_id}"
        return Resumable(
            False,
            f"run {run.id} was already resumed by run {run.resumed_by}, which trained on in the "
            f"same output_dir{then}: resume run {newest_id} instead (the newest checkpoints there "
            f"are not run {run.id}'s)",
            instead=newest_id,
        )
    if not run.finished:
        return Resumable(False, f"run {run.id} is still {run.state}; cancel it before resuming")
    if run.replaced_by:
        return Resumable(
            False,
            f"run {run.id}'s output_dir was overwritten by run {run.replaced_by}; there is nothing of it to resume",
        )
    checkpoint = outputs.last_complete_checkpoint(run.output_dir)
    if checkpoint is None:
        return Resumable(False, f"run {run.id} has no complete checkpoint in {run.output_dir} to resume from")
    step = outputs.checkpoint_step(checkpoint)
    total = max_steps(config_text if config_text is not None else run.config_text)
    whose = "its" if config_text is None else "this config's"
    limit = f"{whose} max_steps is {total}"
    if total is None and config_text is None and run.state == "succeeded":
        total, limit = last_step, f"it trained all {plural(last_step, 'step')} of its epochs"
    # a run that failed or was cancelled after its last checkpoint may still need what a resume does at the end
    # (save the model): only a run that succeeded is known to have nothing left to do
    if run.state == "succeeded" and total is not None and step >= total:
        fix = step + max(total, 1)
        return Resumable(
            False,
            f"run {run.id} has no step left to train: its last checkpoint ({checkpoint.name}) is "
            f"at step {step} and {limit}, so a resume would load it, save it again and end "
            f"(GRPO-A014). Raise max_steps above {step} (e.g. {fix}) to train "
            f"{plural(fix - step, 'more step')}, or start a new run",
            checkpoint.name,
            step,
            total,
            fix,
        )
    return Resumable(True, None, checkpoint.name, step, total)


def with_max_steps(config_text: str, config_format: str, steps: int) -> str:
    """The config's text with max_steps set (a YAML file keeps its comments and order; a JSON body is rewritten)."""
    if config_format == "json":
        return json.dumps({**json.loads(config_text), "max_steps": steps}, indent=1, ensure_ascii=False) + "\n"
    return apply_fix_to_text(config_text, Fix(set={"max_steps": steps}))


def checkpoint_path(run: Run, judged: Resumable) -> Path | None:
    return Path(run.output_dir) / judged.checkpoint if judged.checkpoint else None
