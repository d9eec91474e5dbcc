"""What `resume_from_checkpoint` asks for: nothing, the newest checkpoint in output_dir, or a folder.

One reading for everyone who acts on it: the trainer (grpo_runtime.outputs.checkpoint), the service's path policy
(grpo_schema.engine.policy_paths) and the runs API, so that a value the policy lets through is the value the run
resumes from.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Any


class Resume(enum.Enum):
    LATEST = "the newest checkpoint in output_dir"  # not a string, so a folder named "latest" stays a folder


LATEST = Resume.LATEST


def resume_target(value: Any) -> Resume | str | None:
    """None (start fresh) for null, false, "" or "false" in any case; LATEST for true or "true" in any case;
    otherwise the folder path as written."""
    if value is None or value is False or (isinstance(value, str) and value.strip().lower() in ("", "false")):
        return None
    if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
        return LATEST
    return str(value)


# The file grpo_runtime writes last into a checkpoint, once every process has saved (grpo_runtime.outputs.checkpoint
# STATE_FILE): a checkpoint without it was cut short and cannot be resumed from.
CHECKPOINT_STATE_FILE = "runtime_state.json"


def complete_checkpoints(output_dir: str | Path) -> list[Path]:
    """The complete checkpoint-STEP folders of output_dir, oldest first (the ones a resume can start from)."""
    found = [
        (int(m.group(1)), p)
        for p in Path(output_dir).glob("checkpoint-*")
        if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)) and (p / CHECKPOINT_STATE_FILE).is_file()
    ]
    return [path for _, path in sorted(found)]
