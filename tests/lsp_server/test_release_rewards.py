"""`reward_funcs` completion in the editor offers the names the judged release's `trl grpo` script registers, not
TRL 1.16's: none before 0.18, think_format_reward alone at 0.19, as the release's own script resolves them."""

from __future__ import annotations

import pytest

from tests.support.lsp import open_text

# The registry of each release's `trl grpo` script (trl/scripts/grpo.py's reward_funcs_registry at that tag).
REGISTRIES = {
    "0.16.1": [],
    "0.19.1": ["think_format_reward"],
    "1.16.0": ["accuracy_reward", "reasoning_accuracy_reward", "think_format_reward", "get_soft_overlong_punishment"],
}


@pytest.mark.parametrize("release", sorted(REGISTRIES))
def test_reward_funcs_completion_offers_the_judged_releases_names(server, tmp_path, release):
    text = f"# grpo: --trl-version {release}\nnum_generations: 8\nreward_funcs:\n  - \nreward_weights: \n"
    uri = open_text(server, tmp_path, f"rewards-{release}.yaml", text)
    server.wait_publish(uri)
    items = server.complete(uri, 3, 4)
    assert [item["label"] for item in items] == REGISTRIES[release]
    inline = text.replace("reward_funcs:\n  - \n", "reward_funcs: \n")
    uri = open_text(server, tmp_path, f"rewards-inline-{release}.yaml", inline)
    server.wait_publish(uri)
    assert [item["label"] for item in server.complete(uri, 2, len("reward_funcs: "))] == REGISTRIES[release]
