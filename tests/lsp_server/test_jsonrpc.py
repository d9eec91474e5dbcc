"""JSON-RPC 2.0 over a real `grpo lsp`: a body that is not JSON gets Parse error (-32700) with a null id, a message
that is no request, notification or response gets Invalid Request (-32600), and the server goes on serving."""

from __future__ import annotations

import json

import pytest

from tests.support.lsp import open_text

CONFIG = "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nper_device_train_batch_size: 4\nnum_generations: 6\n"


@pytest.mark.parametrize(
    "body",
    [b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {', b"not json at all", b"\xff\xfe{}"],
    ids=["truncated", "text", "not-utf8"],
)
def test_a_body_that_is_not_json_gets_parse_error_with_a_null_id(server, body):
    answer = server.send_raw(body)
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None and "result" not in answer
    assert answer["error"]["code"] == -32700 and answer["error"]["message"].startswith("Parse error")


@pytest.mark.parametrize(
    ("message", "answer_id"),
    [
        ({"jsonrpc": "2.0", "id": 41}, 41),  # only an id
        ({"jsonrpc": "2.0", "id": "only-id"}, "only-id"),
        ({"jsonrpc": "1.0", "id": 42, "method": "textDocument/hover", "params": {}}, 42),
        ({"id": 43, "method": "shutdown"}, 43),  # no "jsonrpc"
        ([], None),
        (5, None),
        ({"jsonrpc": "2.0"}, None),
    ],
    ids=["only-id", "only-string-id", "jsonrpc-1.0", "no-jsonrpc", "empty-batch", "number", "empty"],
)
def test_a_message_that_is_no_request_gets_invalid_request(server, message, answer_id):
    answer = server.send_raw(json.dumps(message).encode(), answer_id)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id and "result" not in answer
    assert answer["error"]["code"] == -32600 and answer["error"]["message"].startswith("Invalid Request")


def test_the_server_keeps_serving_after_bad_messages(server, tmp_path):
    server.send_raw(b"{]")
    server.send_raw(b'{"jsonrpc": "2.0", "id": 99}', 99)
    uri = open_text(server, tmp_path, "after-bad.yaml", CONFIG)
    assert {d["code"] for d in server.wait_publish(uri)} >= {"GRPO-B001"}
    assert server.hover(uri, 2, 2).startswith("**num_generations**")
