"""Every file of ../shared/verl-corpus read in process: the findings verl gives only on the cluster or never, at the
file's declared GPUs (verl's own parse-time verdict on each file is tests/verl/test_oracle.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_schema.dialects.verl.check import check_verl_text

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "verl-corpus"
FILES = sorted(p for p in CORPUS.glob("[0-9][0-9]_*") if p.is_file()) if CORPUS.is_dir() else []
BEYOND_PARSE_TIME = {"Q030", "Q031", "Q032", "Q033", "Q034", "Q035", "Q036", "Q037", "Q050", "Q051", "Q052", "Q053"}
# What each file gets beyond verl's parse-time checks (the files not listed get none):
EXPECTED = {
    "19": {"Q050"},  # verl's SkyPilot tutorial: adv_estimator=grpo with rollout.n=1
    "21": {"Q050"},  # atropos: grpo without rollout.n (verl's default 1; the groups come from its own API)
    "23": {"Q035"},  # vendored verl 0.1 recipes: only the deprecated global micro-batch sizes
    "24": {"Q035", "Q050"},  # Search-R1: its group is rollout.n_agent, which mainline verl does not read
    "25": {"Q035"},
    "30": {"Q053"},  # ToRL: ppo_mini_batch_size 1024 > train_batch_size 128 under dynamic batch size
}


@pytest.mark.parametrize("path", FILES or [None], ids=[p.name[:2] for p in FILES] or ["no corpus"])
def test_corpus_file_findings(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"{CORPUS} is not there (the checkout's parent has shared/ in CI)")
    result = check_verl_text(path.read_text(), path.name)
    found = {d.code[5:] for d in result.diagnostics if d.code[5:] in BEYOND_PARSE_TIME - {"Q051"}}
    assert found == EXPECTED.get(path.name[:2], set())
    assert all(d.line for d in result.diagnostics if d.code[5:] in found)


def test_declared_gpus_with_defaults_are_read() -> None:
    if not FILES:
        pytest.skip(f"{CORPUS} is not there")
    sizes = {p.name[:2]: check_verl_text(p.read_text(), p.name).world_size for p in FILES}
    # 10: ${NGPUS_PER_NODE:-8} x ${NNODES:-8}; 11: 8 x ${NNODES:-16}; 17: 8 x 12; 09: 8 x 4; 08: one GPU
    assert (sizes["10"], sizes["11"], sizes["17"], sizes["09"], sizes["08"]) == (64, 128, 96, 32, 1)
