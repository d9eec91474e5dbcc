"""The example recipes whose job spans several nodes: what `grpo launch --emit` turns into cluster tasks."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def multi_node_examples() -> list[str]:
    """Examples whose job spans several nodes: num_machines > 1, or a declared hardware of several nodes."""
    names = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        hardware = str(data.get("hardware", ""))
        if (
            (data.get("num_machines") or 1) > 1
            or re.match(r"^\s*\d+\s*x\s*\d+\s*x", hardware, re.I)
            or (data.get("vllm_mode") == "server" and not data.get("vllm_server_base_url"))
        ):
            names.append(path.name)
    return names


MULTI = multi_node_examples()
