"""POST /api/v1/validate keeps the answer for a body sent again (web/api/memo.py): a kept answer is the bytes a new
check gives, options never share one, files on this machine are read anew, and the memory stays bounded."""

from __future__ import annotations

from fastapi.testclient import TestClient

from grpo_web.api.memo import ENTRY_OVERHEAD_BYTES, AnswerCache
from grpo_web.app import create_app
from grpo_web.settings import Settings
from tests.conftest import conformance_files
from tests.support.web_app import without_lane

YAML = {"content-type": "application/yaml"}
RECIPE = b"num_generations: 8\nper_device_train_batch_size: 4\nlearning_rate: 1e-6\n"


def post(client: TestClient, body: bytes, query: str = "", headers: dict = YAML):
    response = client.post("/api/v1/validate" + (f"?{query}" if query else ""), content=body, headers=headers)
    return response.status_code, sorted(response.headers.items()), response.content


def test_a_body_sent_again_gets_the_same_bytes_without_a_new_check():
    files = [path.read_bytes() for path in conformance_files("valid") + conformance_files("invalid")][:40]
    with TestClient(create_app(Settings())) as lane, TestClient(without_lane(Settings())) as route:
        cache: AnswerCache = lane.app.state.answers
        for body in [RECIPE, *files]:
            first = post(lane, body)
            hits = cache.hits
            assert post(lane, body) == first == post(route, body)
            kept = b"--hardware" not in body  # an answer that read model configs from disk is never kept (memo.py)
            assert cache.hits == hits + kept, body[:80]


def test_options_and_media_types_never_share_an_answer():
    with TestClient(create_app(Settings())) as client:
        at_one = post(client, RECIPE)
        at_seven = post(client, RECIPE, "world_size=7")
        named = post(client, RECIPE, "path=run.yaml")
        as_json = post(
            client,
            b'{"num_generations": 8, "per_device_train_batch_size": 4}',
            headers={"content-type": "application/json"},
        )
        assert b'"world_size":1' in at_one[2].replace(b" ", b"")
        assert b'"world_size":7' in at_seven[2].replace(b" ", b"")
        assert b'"path":"run.yaml"' in named[2].replace(b" ", b"")
        assert client.app.state.answers.hits == 0 and len(client.app.state.answers) == 4
        assert post(client, RECIPE, "world_size=7") == at_seven and client.app.state.answers.hits == 1
        assert as_json[0] == 200


def test_a_body_that_asks_for_the_memory_fit_is_checked_anew(tmp_path):
    # the fit reads the model's config.json from disk: a kept answer would miss an edit of that file
    model = tmp_path / "model"
    model.mkdir()
    body = (
        f"# grpo: --hardware 1xA100-40GB\nmodel_name_or_path: {model}\nper_device_train_batch_size: 4\n"
        "num_generations: 4\n"
    ).encode()
    with TestClient(create_app(Settings())) as client:
        post(client, body)
        post(client, body)
        assert len(client.app.state.answers) == 0 and client.app.state.answers.hits == 0


def test_turned_off_every_request_is_checked():
    with TestClient(create_app(Settings(validate_cache_mib=0))) as client:
        assert post(client, RECIPE) == post(client, RECIPE)
        assert len(client.app.state.answers) == 0 and client.app.state.answers.hits == 0


def test_the_cache_is_bounded_in_bytes_and_evicts_the_least_recently_used():
    options = {"world_size": None, "path": "<request>", "trl_version": "1.16.0", "trl_version_source": "default"}
    answer = b"x" * 800
    per_entry = 10 + len("<request>") + len(answer) + ENTRY_OVERHEAD_BYTES
    cache = AnswerCache(max_bytes=per_entry * 5)
    keys = [cache.key(f"body {i:05d}".encode(), "application/yaml", options) for i in range(8)]
    for key in keys[:5]:
        cache.put(key, answer)
    assert len(cache) == 5 and cache.used_bytes == per_entry * 5
    assert cache.get(keys[0]) == answer  # now the most recently used
    for key in keys[5:]:
        cache.put(key, answer)
    assert cache.used_bytes <= cache.max_bytes and len(cache) == 5
    assert cache.get(keys[0]) == answer and cache.get(keys[1]) is None and cache.get(keys[2]) is None
    cache.put(keys[7], answer)  # replacing an entry does not count it twice
    assert cache.used_bytes == per_entry * len(cache)
    cache.put(cache.key(b"y" * per_entry * 2, "application/yaml", options), answer)  # over a quarter: not kept
    assert len(cache) == 5 and cache.used_bytes == per_entry * 5
