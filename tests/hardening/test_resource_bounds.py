"""Every input size and shape is refused quickly, with a diagnostic or a 4xx, in bounded memory.

The library: alias bombs, 10 MB files, 10,000-deep nesting, 100,000 keys, 1 MB keys and values (check_text and
check_mapping). The service, on a real uvicorn: the same bodies, bodies too large before and while they are read,
and bodies trickled byte by byte (408 after the service's body_timeout_s, not a connection held forever).
Time limits are generous for a shared machine; the measured times are far below them.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from contextlib import contextmanager

import httpx
import pytest

from grpo_schema import check_mapping, check_text
from grpo_schema.engine.placing import MAX_TEXT
from tests.hardening import rawhttp
from tests.hardening.invariants import assert_structured, time_limit

MB = 1_000_000
SECONDS = 10  # per input; each takes well under a second
PEAK_BYTES = 64 * MB  # Python allocations while handling one input (a 1 MB file needs a few MB)


@contextmanager
def bounded(seconds: float = SECONDS, peak: int = PEAK_BYTES):
    tracemalloc.start()
    try:
        with time_limit(seconds):
            yield
        assert tracemalloc.get_traced_memory()[1] < peak
    finally:
        tracemalloc.stop()


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def nested(depth: int, open_: str, close: str, inner: str = "1") -> str:
    return open_ * depth + inner + close * depth


def many_keys(count: int) -> str:
    """A flow mapping of `count` distinct 4-letter keys: 100,000 of them fit in 800 kB."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    names = (a + b + c + d for a in letters for b in letters for c in letters for d in letters)
    return "{" + ", ".join(f"{next(names)}: 0" for _ in range(count)) + "}\n"


def deep_value(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


TEXTS = {  # input -> the code that refuses it
    "billion laughs": (billion_laughs(), "GRPO-Y006"),
    "self-referencing alias": ("a: &a [1, *a]\n", "GRPO-Y006"),
    "10 MB of text": ("run_name: " + "x" * (10 * MB), "GRPO-Y007"),
    "10 MB of bytes": (b"run_name: " + b"x" * (10 * MB), "GRPO-Y007"),
    "10,000-deep list": ("model_init_kwargs: " + nested(10_000, "[", "]"), "GRPO-Y008"),
    "10,000-deep mapping": ("model_init_kwargs: " + nested(10_000, "{a: ", "}"), "GRPO-Y008"),
    "100,000 keys": (many_keys(100_000), "GRPO-Y013"),
}


@pytest.mark.parametrize("name", TEXTS)
def test_hostile_files_are_refused_quickly_in_bounded_memory(name):
    text, code = TEXTS[name]
    with bounded():
        result = check_text(text)
    assert_structured(result)
    assert [d.code for d in result.diagnostics] == [code]


MAPPINGS = {
    "10,000-deep list": ({"reward_funcs": deep_value(10_000)}, "GRPO-Y008"),
    "100,000 keys": ({f"k{i}": 0 for i in range(100_000)}, "GRPO-Y013"),
    "a cycle": (lambda: (m := {"env": {}}) and m["env"].setdefault("self", m) and m, "GRPO-Y008"),
    "a non-string key": ({1: 2}, "GRPO-Y010"),
}


@pytest.mark.parametrize("name", MAPPINGS)
def test_hostile_mappings_get_the_loader_bounds(name):
    """check_mapping's input never went through the loader (JSON bodies, Python callers)."""
    mapping, code = MAPPINGS[name]
    mapping = mapping() if callable(mapping) else mapping
    with bounded():
        result = check_mapping(mapping)
    assert [d.code for d in result.diagnostics] == [code]


LONG = {
    "1 MB key": "? " + "k" * (MB - 100) + "\n: 1\n",
    "1 MB value": "run_name: " + "v" * (MB - 100) + "\n",
    "1 MB env value": "env:\n  TOKENIZERS_PARALLELISM: " + "v" * (MB - 100) + "\n",
    "1 MB reward name": "reward_funcs: [" + "r" * (MB - 100) + "]\n",
    "1 MB choice": "loss_type: " + "g" * (MB - 100) + "\n",
}


@pytest.mark.parametrize("name", LONG)
def test_megabyte_keys_and_values_give_bounded_diagnostics(name):
    with bounded():
        result = check_text(LONG[name])
    assert_structured(result)
    assert all(len(d.message) <= MAX_TEXT and len(d.hint) <= MAX_TEXT for d in result.diagnostics)


# --- the service, over real HTTP ----------------------------------------------------------------------------------


def post(server, body: bytes | str, content_type: str = "application/yaml", endpoint: str = "validate"):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return client.post(f"/api/v1/{endpoint}", content=body, headers={"content-type": content_type})


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        (billion_laughs(), "application/yaml", 200, "GRPO-Y006"),
        ("model_init_kwargs: " + nested(10_000, "[", "]"), "text/plain", 200, "GRPO-Y008"),
        (json.dumps({"a": 1}).replace("1", nested(10_000, "[", "]")), "application/json", 422, None),
        (json.dumps({f"k{i}": 0 for i in range(100_000)}), "application/json", 413, None),  # 1.2 MB
        (json.dumps({f"k{i}": 0 for i in range(60_000)}), "application/json", 422, None),  # 700 kB, 120,000 values
        (many_keys(100_000), "application/yaml", 200, "GRPO-Y013"),
    ],
)
def test_hostile_bodies_are_answered_quickly(hardened_server, body, content_type, status, code):
    with bounded():
        response = post(hardened_server, body, content_type)
    assert response.status_code == status, response.text[:300]
    if code:
        assert [d["code"] for d in response.json()["diagnostics"]] == [code]


def test_a_10_mb_body_is_refused_before_it_is_sent(hardened_server):
    """Content-Length over the limit: 413 at once, without reading a byte of the body."""
    with rawhttp.connect(hardened_server.url, timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(rawhttp.head("/api/v1/validate", length=10 * MB))
        answer = rawhttp.read_rest(sock)
    assert rawhttp.status_of(answer) == 413 and time.monotonic() - started < SECONDS


def test_a_10_mb_chunked_body_is_cut_off_at_the_limit(hardened_server):
    """No Content-Length: the service counts what arrives and stops at max_body_bytes."""
    sent = []

    def chunks():
        for _ in range(10):
            sent.append(MB)
            yield b"x" * MB

    with bounded(peak=200 * MB):
        try:
            response = httpx.post(
                f"{hardened_server.url}/api/v1/validate",
                content=chunks(),
                timeout=30,
                headers={"content-type": "application/yaml"},
            )
            assert response.status_code == 413
        except httpx.TransportError:  # the server answered 413 and closed while the client was still sending
            pass
    assert len(sent) < 10


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_trickled_byte_by_byte_times_out(hardened_server, chunked):
    """One byte a second kept a request open forever; now 408 after body_timeout_s, and the connection closes."""
    timeout = hardened_server.settings.body_timeout_s
    with rawhttp.connect(hardened_server.url) as sock:
        sock.sendall(rawhttp.head("/api/v1/validate", length=None if chunked else 1000, chunked=chunked))
        if chunked:
            sock.sendall(b"3e8\r\n")  # a chunk of 1,000 bytes announced, then trickled
        answer, seconds = rawhttp.trickle_until_answer(sock, give_up_after=timeout + 20)
    assert rawhttp.status_of(answer) == 408, answer[:200]
    assert timeout <= seconds < timeout + SECONDS
    assert b"connection: close" in answer.lower()


def test_a_body_that_never_comes_times_out(hardened_server):
    timeout = hardened_server.settings.body_timeout_s
    with rawhttp.connect(hardened_server.url, timeout=timeout + SECONDS) as sock:
        started = time.monotonic()
        sock.sendall(rawhttp.head("/api/v1/explain", length=500))
        answer = rawhttp.read_rest(sock, limit_s=timeout + SECONDS)
    assert rawhttp.status_of(answer) == 408 and time.monotonic() - started < timeout + SECONDS
