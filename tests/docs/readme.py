"""The README's command blocks, read as a test reads them.

A block is run when it is a ```bash block (each line a command; `\\` continues a line), or a ```text / ```diff
block whose first line is `$ COMMAND` (the rest is the output it shows), or a ```python block. An HTML comment on
the line before the fence steers it:

    <!-- readme: files=a.yaml,b.yaml:c.yaml -->  copy these from tests/docs/files/ into the work folder first
                                            (b.yaml as c.yaml; `{work}` in a file becomes the folder's path)
    <!-- readme: demo -->                   `grpo demo demo` first (the tiny model and prompts in ./demo)
    <!-- readme: exit=1 -->                 the exit status the command(s) must end with (default 0)
    <!-- readme: runs -->                   a service with runs on is started for the block ($TOKEN, ID, port)
    <!-- readme: serve -->                  a service is started for the block (its port replaces 8000)
    <!-- readme: not-run: REASON -->        not executed, and why (a test lists these)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
NOTE = re.compile(r"^<!--\s*readme:\s*(.*?)\s*-->\s*$")
RUNNABLE = {"bash", "text", "diff", "python"}


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    body: list[str]
    options: dict[str, str] = field(default_factory=dict)

    @property
    def commands(self) -> list[str]:
        if self.language == "bash":
            joined = "\n".join(self.body).replace("\\\n", " ")
            return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        if self.language == "python":
            return ["\n".join(self.body)]
        return [self.body[0][2:]]

    @property
    def shown_output(self) -> list[str]:
        """The output lines a text/diff block shows after its `$` line (without elisions)."""
        if self.language in ("text", "diff"):
            return [line for line in self.body[1:] if line.strip() and line.strip() != "..."]
        return []

    @property
    def runnable(self) -> bool:
        if self.language in ("text", "diff"):
            return bool(self.body) and self.body[0].startswith("$ ")
        return self.language in RUNNABLE

    @property
    def expected_exit(self) -> int:
        return int(self.options.get("exit", "0"))


def parse_options(text: str) -> dict[str, str]:
    if text.startswith("not-run:"):
        return {"not-run": text.removeprefix("not-run:").strip()}
    return dict(part.split("=", 1) if "=" in part else (part, "") for part in text.split())


def read_blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if not opened:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        note = NOTE.match(lines[index - 1]) if index else None
        options = parse_options(note.group(1)) if note else {}
        blocks.append(Block(index + 1, opened.group(1), lines[index + 1 : end], options))
        index = end + 1
    return blocks
