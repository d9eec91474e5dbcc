"""What `resume_from_checkpoint` asks for: nothing, the newest checkpoint in output_dir, or a folder.

One reading for everyone who acts on it: the trainer (grpo_runtime.checkpoint), the service's path policy
(grpo_schema.policy) and the runs API, so that a value the policy lets through is the value the run resumes from.
"""

from __future__ import annotations

import enum
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
