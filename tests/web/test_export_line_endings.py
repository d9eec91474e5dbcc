"""Export keeps the imported file's line endings: a file written on Windows (CRLF) comes back CRLF on every line, the
schema modeline the export adds above it and the keys it appends included; never a file of mixed line endings. A
byte order mark stays the file's first character, above the modeline."""

from __future__ import annotations

import httpx

SOURCE = "# my model\r\nmodel_name_or_path: m\r\nnum_generations: 8  # G\r\nlearning_rate: 1.0e-06\r\n"


def test_a_crlf_file_is_exported_crlf_on_every_line(live_server):
    body = {
        "config": {"model_name_or_path": "m", "num_generations": 16, "learning_rate": 1e-6, "beta": 0.04},
        "source": SOURCE,
        "renames": {},
        "world_size": 4,
        "write_world_size": True,
        "source_kind": "file",
    }
    answer = httpx.post(f"{live_server.url}/api/v1/export", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    text = answer.json()["yaml"]
    lines = text.split("\n")[:-1]
    assert len(lines) == 7 and all(line.endswith("\r") for line in lines), repr(text)  # the modeline was "\n"
    assert "num_generations: 16  # G\r\n" in text and "beta: 0.04\r\n" in text and "num_processes: 4\r\n" in text
    body["source"] = "# yaml-language-server: $schema=grpo-config.schema.json\r\nmodel_name_or_path: m\r\n"
    body["config"], body["world_size"] = {"model_name_or_path": "n"}, None
    text = httpx.post(f"{live_server.url}/api/v1/export", json=body, timeout=30).json()["yaml"]
    assert text.startswith("# yaml-language-server: $schema=http") and text.endswith("\r\nmodel_name_or_path: n\r\n")
    assert "grpo-config.schema.json\r" not in text  # the relative modeline was replaced, not kept beside the new one


def test_a_file_with_a_byte_order_mark_exports_as_a_file_yaml_reads(live_server):
    from grpo_schema.engine.loader import load_yaml

    body = {
        "config": {"model_name_or_path": "m", "num_generations": 16},
        "renames": {},
        "world_size": None,
        "source": "\ufeffmodel_name_or_path: m\nnum_generations: 8\n",
        "write_world_size": False,
        "source_kind": "file",
    }
    text = httpx.post(f"{live_server.url}/api/v1/export", json=body, timeout=30).json()["yaml"]
    assert text.startswith("\ufeff# yaml-language-server:") and text.count("\ufeff") == 1  # was mid-file
    loaded = load_yaml(text)
    assert loaded.ok and loaded.data == {"model_name_or_path": "m", "num_generations": 16}
