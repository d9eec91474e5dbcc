"""docs/launch/*.md show the open-r1 recipe's specs: each block marked `<!-- emit: TARGET [FORM] -->` is exactly what
`grpo launch --emit TARGET examples/open-r1.yaml` prints, so the pages never drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- emit: (\w+)(?: ([\w-]+))? -->\n```yaml\n(.*?)```", re.S)
PAGES = sorted((ROOT / "docs" / "launch").glob("*.md"))


def blocks() -> list[tuple[str, str, str | None, str]]:
    return [(page.name, match[1], match[2], match[3]) for page in PAGES for match in BLOCK.finditer(page.read_text())]


def test_each_emitting_target_has_a_page_with_the_open_r1_spec():
    assert {target for _, target, _, _ in blocks()} == {"skypilot", "dstack", "kubernetes"}
    assert {page.stem for page in PAGES} == {"skypilot", "dstack", "kubernetes", "ray"}
    index = (ROOT / "docs" / "launch.md").read_text()
    assert all(f"(launch/{page.name})" in index for page in PAGES)


@pytest.mark.parametrize("page, target, form, text", blocks(), ids=lambda value: str(value)[:20])
def test_the_spec_on_the_page_is_what_the_code_writes(page, target, form, text):
    done = grpo("launch", "--emit", target, "examples/open-r1.yaml", *(["--k8s-form", form] if form else []), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert text == done.stdout, f"docs/launch/{page} is stale: paste the output of grpo launch --emit {target}"
