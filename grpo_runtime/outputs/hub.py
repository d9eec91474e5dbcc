"""push_to_hub: uploading the model to the Hugging Face Hub where the HF Trainer does, with huggingface_hub.

* when the run starts, the repository `hub_model_id` (default: the name of output_dir) is created if missing,
  private with `hub_private_repo`, and the branch `hub_revision` when one is set;
* on every checkpoint save, except with `hub_strategy: end`, the model files of the checkpoint (config, weights,
  tokenizer) are copied to output_dir and output_dir is uploaded in the background ("Training in progress, step
  N"); `checkpoint` also uploads the checkpoint folder as `last-checkpoint/`, `all_checkpoints` as
  `checkpoint-N/`. While an upload is still running the next save uploads nothing, unless `hub_always_push`;
* at the end output_dir (without checkpoint-* folders) is uploaded and waited for ("End of training").

The token is never read from the config (the validator refuses `hub_token` in a file): huggingface_hub finds
it as usual (HF_TOKEN, then the token file of `hf auth login`). A failed upload never touches the local files:
background failures are reported as warnings and the run goes on; a failed final upload raises PushFailed once
everything is saved locally.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "adapter_config.json",
    "adapter_model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "vocab.json",
    "merges.txt",
)
IGNORED = ["_*", "checkpoint-*"]


class PushFailed(RuntimeError):
    """The final upload failed; the trained model is in output_dir all the same."""


class HubPusher:
    """Uploads from the main process; the other processes hold a pusher that does nothing."""

    def __init__(self, config, output_dir: Path, main_process: bool):
        self.enabled = bool(config.push_to_hub) and main_process
        self.output_dir = output_dir
        self.repo_id = config.hub_model_id or output_dir.absolute().name
        self.strategy = config.hub_strategy
        self.private = config.hub_private_repo
        self.revision = config.hub_revision
        self.always_push = config.hub_always_push
        self.epoch_saves = config.save_strategy == "epoch"
        self.jobs: list = []  # (description, future) of background uploads
        self.failures: list[str] = []
        self.api = None

    def start(self) -> None:
        if not self.enabled:
            return
        from huggingface_hub import HfApi

        self.api = HfApi()
        try:
            url = self.api.create_repo(self.repo_id, private=self.private, exist_ok=True)
            self.repo_id = url.repo_id
            if self.revision:
                self.api.create_branch(self.repo_id, branch=self.revision, exist_ok=True)
        except Exception as error:  # any failure of the Hub: report it, keep training
            self.report(f"could not create the Hub repository {self.repo_id!r}", error)

    def after_save(self, checkpoint: Path, step: int, epoch: float) -> None:
        """Called on the main process after checkpoint-STEP is complete on disk."""
        if not self.enabled or self.api is None or self.strategy == "end":
            return
        self.collect()
        if self.jobs and not self.always_push:
            return  # the previous upload is still running (HF Trainer skips this save too)
        for name in MODEL_FILES:
            if (checkpoint / name).is_file():
                shutil.copy(checkpoint / name, self.output_dir / name)
        message = (
            f"Training in progress, epoch {int(epoch)}" if self.epoch_saves else f"Training in progress, step {step}"
        )
        self.upload(self.output_dir, message, None, background=True)
        if self.strategy in ("checkpoint", "all_checkpoints"):
            where = "last-checkpoint" if self.strategy == "checkpoint" else checkpoint.name
            self.upload(checkpoint, message + ", checkpoint", where, background=True)

    def busy(self) -> bool:
        """An upload is running (a checkpoint folder must not be pruned under it)."""
        self.collect()
        return bool(self.jobs)

    def finish(self) -> None:
        """The final upload of output_dir, after the model is saved there. Raises PushFailed."""
        if not self.enabled or self.api is None:
            return
        for _, job in self.jobs:
            job.exception()  # wait, without raising: collect() reports
        self.collect()
        try:
            self.upload(self.output_dir, "End of training", None, background=False)
        except Exception as error:
            raise PushFailed(
                f"the final push to the Hub repository {self.repo_id!r} failed "
                f"({type(error).__name__}: {first_line(error)}); the trained model is saved in "
                f"{self.output_dir}: upload it with `hf upload {self.repo_id} {self.output_dir}`"
            ) from None

    def upload(self, folder: Path, message: str, path_in_repo: str | None, background: bool):
        ignore = IGNORED if path_in_repo is None else None
        result = self.api.upload_folder(
            repo_id=self.repo_id,
            folder_path=str(folder),
            path_in_repo=path_in_repo,
            commit_message=message,
            revision=self.revision,
            ignore_patterns=ignore,
            run_as_future=background,
        )
        if background:
            self.jobs.append((f"{message} ({folder.name})", result))
        return result

    def collect(self) -> None:
        """Forget finished background uploads, reporting those that failed."""
        running = []
        for description, job in self.jobs:
            if not job.done():
                running.append((description, job))
            elif job.exception() is not None:
                self.report(f"background push {description!r} failed", job.exception())
        self.jobs = running

    def report(self, what: str, error: BaseException) -> None:
        line = f"grpo_runtime: push_to_hub: {what}: {type(error).__name__}: {first_line(error)} (local files kept)"
        self.failures.append(line)
        print(line, file=sys.stderr)


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""
