"""Checkpoints (`output_dir/checkpoint-STEP/`) and exact resume.

A checkpoint holds everything the next optimizer step depends on, so a resumed run reaches the same weights as an
uninterrupted one: the policy (`save_pretrained`, loadable on its own), the optimizer and scheduler, each
process's RNG states, the training counters (which also fix the prompt order, a pure function of the seed and the
generation index), the metrics collected since the last log, and each process's unused generation buffer when a
generation spans several optimizer steps. With `sync_ref_model` the drifted reference model is saved too.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from grpo_schema.engine.resume import LATEST, resume_target

STATE_FILE = "runtime_state.json"  # not trainer_state.json: an HF checkpoint must not look like ours
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


@dataclass
class Progress:
    """Training counters and the mutable state that moves with them."""

    global_step: int = 0  # optimizer steps taken
    micro_step: int = 0  # micro-steps taken (TRL's `_step`); fixes the generation index and buffer slot
    num_input_tokens_seen: int = 0  # prompt + completion tokens generated so far, all processes
    entropy_coef: float = 0.0  # adaptive entropy controller: coefficient for the next window
    last_world_entropy: float = float("inf")  # ... and the entropy it measured last (inf: gate closed)
    metric_window: dict = field(default_factory=dict)  # MetricWindow.state_dict()
    loss_since_log: float = 0.0  # summed micro-step losses since the last log, this process
    steps_since_log: int = 0
    best_metric: float | None = None  # metric_for_best_model's best value so far (grpo_runtime.outputs.best)
    best_global_step: int = 0  # ... the step that reached it
    best_model_checkpoint: str | None = None  # ... and its checkpoint, once one exists


class CheckpointError(ValueError):
    """A resume target that cannot be used; `grpo train` reports it as an error, not a traceback."""


def checkpoint_dirs(output_dir: Path) -> list[Path]:
    """Existing checkpoints, oldest first."""
    found = [(int(m.group(1)), p) for p in output_dir.glob("checkpoint-*") if (m := CHECKPOINT.match(p.name))]
    return [p for _, p in sorted(found)]


def resolve_resume(value, output_dir: Path) -> Path | None:
    """`resume_from_checkpoint` (grpo_schema.engine.resume): a checkpoint folder, or true for the newest complete one in
    output_dir."""
    target = resume_target(value)
    if target is None:
        return None
    if target is LATEST:
        found = [path for path in checkpoint_dirs(output_dir) if (path / STATE_FILE).is_file()]
        if not found:
            raise CheckpointError(
                f"resume_from_checkpoint is true but {output_dir} holds no complete checkpoint-STEP folder"
            )
        return found[-1]  # the newest complete one: a run cut short while saving leaves one without state
    if not (Path(target) / STATE_FILE).exists():
        raise CheckpointError(
            f"resume_from_checkpoint {target!r} is not a complete checkpoint folder written by grpo_runtime"
        )
    return Path(target)


def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    directory: Path,
    *,
    accelerator,
    model,
    tokenizer,
    optimizer,
    scheduler,
    progress: Progress,
    buffer,
    reference=None,
    save_only_model: bool = False,
) -> None:
    """Write checkpoint-STEP; every process calls this (each saves its own RNG state and buffer). The state file
    is written last, once every process is done, so its presence marks a complete checkpoint."""
    import grpo_runtime.distributed.sharding as sharding

    rank = accelerator.process_index
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        directory.mkdir(parents=True, exist_ok=True)
    accelerator.wait_for_everyone()
    sharding.save_model(accelerator, model, directory)  # gathers sharded weights: every process takes part
    if not save_only_model:
        sharding.save_training_state(accelerator, model, optimizer, directory)
        if reference is not None:  # gathered from its partitions under ZeRO-3: every process takes part
            sharding.save_model(accelerator, reference, directory / "reference")
    if accelerator.is_main_process:
        tokenizer.save_pretrained(directory)
        if not save_only_model:
            torch.save(scheduler.state_dict(), directory / "scheduler.pt")
    accelerator.wait_for_everyone()
    if save_only_model:
        return
    if buffer is not None:
        torch.save(buffer, directory / f"rollout_buffer_{rank}.pt")
    torch.save(rng_state(), directory / f"rng_state_{rank}.pth")
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_atomically(directory / STATE_FILE, json.dumps(asdict(progress), indent=1))
    accelerator.wait_for_everyone()


def write_atomically(path: Path, text: str) -> None:
    """The state file marks a complete checkpoint, so it must never exist half-written: a run cancelled during
    this write leaves only the temporary file, and the checkpoint counts as incomplete."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


def load_weights(model, directory: Path) -> None:
    """Load the policy weights `save_pretrained` wrote (a full model or a PEFT adapter) into `model`."""
    from safetensors.torch import load_file

    adapter = directory / "adapter_model.safetensors"
    if adapter.exists():
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(model, load_file(str(adapter)))
        return
    state = {}
    for shard in sorted(directory.glob("model*.safetensors")):
        state.update(load_file(str(shard)))
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = {name for name in missing if "lm_head" in name or "embed" in name}  # tied copies are not saved
    if unexpected or set(missing) - tied:
        raise ValueError(f"checkpoint {directory} does not match the model: missing {missing}, unexpected {unexpected}")


def load_checkpoint(directory: Path, *, accelerator, model, optimizer, scheduler, reference=None):
    """Restore a checkpoint into freshly built objects. Returns (Progress, generation buffer or None)."""
    import grpo_runtime.distributed.sharding as sharding

    rank = accelerator.process_index
    sharding.load_training_state(accelerator, model, optimizer, directory, load_weights)
    scheduler.load_state_dict(torch.load(directory / "scheduler.pt", weights_only=False))
    if reference is not None and (directory / "reference").exists():
        sharding.load_model_state(accelerator, reference, directory / "reference", load_weights)
    progress = read_progress(directory)
    restore_rng(torch.load(directory / f"rng_state_{rank}.pth", weights_only=False))
    buffer_file = directory / f"rollout_buffer_{rank}.pt"
    buffer = torch.load(buffer_file, weights_only=False) if buffer_file.exists() else None
    return progress, buffer


def read_progress(directory: Path) -> Progress:
    try:
        return Progress(**json.loads((directory / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as exc:
        raise CheckpointError(
            f"checkpoint {directory} has an unreadable {STATE_FILE} ({exc}); resume from an earlier checkpoint"
        ) from None


def prune_checkpoints(output_dir: Path, keep: int | None, best: str | None = None) -> None:
    """save_total_limit: delete the oldest checkpoints beyond `keep`, never the newest (to resume from) nor the best
    one (load_best_model_at_end, metric_for_best_model: so two are kept when the limit is 1 and the best is older)."""
    if not keep or keep <= 0:
        return
    found = checkpoint_dirs(output_dir)
    protected = {found[-1].resolve()} if found else set()
    if best is not None:
        protected.add(Path(best).resolve())
    remaining = len(found)
    for old in found:
        if remaining <= max(keep, len(protected)):
            break
        if old.resolve() not in protected:
            shutil.rmtree(old, ignore_errors=True)
            remaining -= 1
