"""Fixtures shared by every test folder: where the reference material (../shared) lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "grpo-corpus"


def corpus_files(kind: str) -> list[Path]:
    folder = CORPUS / kind
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference material not found at {SHARED} (the ../shared folder beside the checkout)")
    return SHARED
