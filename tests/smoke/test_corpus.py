"""`grpo smoke` passes on every file of ../shared/grpo-corpus/valid that `grpo train --dry-run` accepts (skipped,
with the reason, when the shared corpus is absent)."""

import json

import pytest

from tests.conftest import REPO

from .test_examples import grpo

pytestmark = pytest.mark.slow
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"


def corpus_files():
    return sorted(CORPUS.glob("*.yaml")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_every_corpus_file_the_dry_run_accepts_smoke_passes(tmp_path):
    failed, accepted = {}, 0
    for path in corpus_files():
        if grpo("train", str(path), "--dry-run", cwd=tmp_path).returncode != 0:
            continue
        accepted += 1
        done = grpo("smoke", str(path), "--format", "json", cwd=tmp_path)
        report = json.loads(done.stdout)
        if not report["passed"]:
            failed[path.name] = (report.get("component"), report.get("error"))
    assert accepted and not failed, failed
