"""`grpo lsp` over stdio: the diagnostics of `grpo validate` on the right keys, quick fixes that make the file valid,
the batch schedule on hover, completion, syntax errors, and the world size from a `# grpo:` comment or settings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grpo_schema.engine.validate import check_text
from tests.conftest import REPO
from tests.support.lsp import QWEN, apply_edits, line_of, open_text, start_server

ERROR, WARNING = 1, 2


def codes(diagnostics: list[dict]) -> list[str]:
    return [d["code"] for d in diagnostics]


def test_the_readme_b001_example_is_an_error_on_num_generations(server):
    text = QWEN.read_text()
    uri = server.open(QWEN)
    found = server.wait_publish(uri)
    # The same diagnostics, in the same order, as `grpo validate` (one engine).
    assert codes(found) == [d.code for d in check_text(text).diagnostics]
    b001 = next(d for d in found if d["code"] == "GRPO-B001")
    line = line_of(text, "num_generations")
    assert b001["severity"] == ERROR and b001["source"] == "grpo"
    assert b001["range"] == {
        "start": {"line": line, "character": 0},
        "end": {"line": line, "character": len("num_generations")},
    }
    assert "is not a multiple of num_generations (14)" in b001["message"]
    assert b001["data"]["hint"] and b001["data"]["hint"] in b001["message"]
    assert b001["data"]["description"].startswith("GRPO-B001 (error)")
    assert b001["codeDescription"]["href"].startswith("https://")
    renamed = next(d for d in found if d["code"] == "GRPO-K002")  # torch_dtype: the key itself is the range
    assert renamed["range"]["start"]["line"] == line_of(text, "torch_dtype")
    assert renamed["range"]["end"]["character"] == len("torch_dtype")


def test_a_quick_fix_edits_minimally_and_the_document_then_validates(server, tmp_path):
    text = QWEN.read_text()
    uri = open_text(server, tmp_path, "qwen.yaml", text)
    server.wait_publish(uri)
    line = line_of(text, "num_generations")
    actions = server.code_actions(uri, (line, 0), (line, 5))
    titles = [a["title"] for a in actions]
    assert "GRPO-B001: num_generations 14 -> 16 (review)" in titles
    assert all(a["kind"] == "quickfix" for a in actions if a["title"].startswith("GRPO-B001"))
    fix = next(a for a in actions if a["title"] == "GRPO-B001: num_generations 14 -> 16 (review)")
    edits = fix["edit"]["changes"][uri]
    assert len(edits) == 1 and edits[0]["range"]["start"]["line"] == line  # one small edit on that line only
    text = apply_edits(text, edits)
    assert "num_generations: 16\n" in text and text.startswith("# A Qwen recipe")  # the comment is kept
    version = server.change(uri, text)
    after = server.wait_publish(uri, version)
    assert "GRPO-B001" not in codes(after) and "GRPO-K002" in codes(after)
    # The renamed key's quick fix (safe, preferred), then nothing is left: the file validates.
    rename = next(a for a in server.code_actions(uri, (4, 0), (4, 3)) if a["title"].startswith("GRPO-K002"))
    assert rename["isPreferred"] is True
    text = apply_edits(text, rename["edit"]["changes"][uri])
    version = server.change(uri, text)
    assert server.wait_publish(uri, version) == []
    assert check_text(text).valid and "dtype: bfloat16" in text


def test_fix_all_safe_and_migrate_are_source_actions_that_keep_comments(server, tmp_path):
    text = (
        "# tuned for 8 GPUs\nmodel_name_or_path: m  # the base\ntorch_dtype: bfloat16  # halves memory\n"
        "max_prompt_length: 512\nvllm_device: cuda:7\nnum_generations: 8\n"
    )
    uri = open_text(server, tmp_path, "old.yaml", text)
    server.wait_publish(uri)
    actions = {a["kind"]: a for a in server.code_actions(uri, (0, 0), (0, 0), only=["source"])}
    assert set(actions) == {"source.fixAll.grpo", "source.grpo.migrate"}
    migrated = apply_edits(text, actions["source.grpo.migrate"]["edit"]["changes"][uri])
    assert "dtype: bfloat16  # halves memory" in migrated and "# tuned for 8 GPUs" in migrated
    assert "max_prompt_length" not in migrated and "# grpo migrate removed `vllm_device: cuda:7`" in migrated
    fixed = apply_edits(text, actions["source.fixAll.grpo"]["edit"]["changes"][uri])
    assert "dtype: bfloat16  # halves memory" in fixed and "vllm_device: cuda:7" in fixed  # unsafe: left alone
    # Only the lines that change are sent.
    for edit in actions["source.fixAll.grpo"]["edit"]["changes"][uri]:
        assert edit["range"]["end"]["line"] - edit["range"]["start"]["line"] <= 1


def test_hover_on_num_generations_shows_the_schedule_at_the_declared_world_size(server, tmp_path):
    text = (
        "# grpo: --world-size 4\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\n"
        "num_generations: 16\ntorch_dtype: bfloat16\n"
    )
    uri = open_text(server, tmp_path, "hover.yaml", text)
    server.wait_publish(uri)
    shown = server.hover(uri, 3, 4)
    assert shown.startswith("**num_generations**")
    assert "Completions sampled per prompt: the GRPO group size G." in shown and "Default: `8`" in shown
    assert "**Schedule at world size 4**" in shown
    assert (
        "| generation batch | 256 | per_device_train_batch_size x world_size x steps_per_generation "
        "= 16 x 4 x 4 = 256 |"
    ) in shown
    assert "| prompts per generation | 16 |" in shown and "| steps per generation | 4 |" in shown
    assert "| optimizer steps per generation | 1 |" in shown
    assert "renamed dtype in TRL 0.23" in server.hover(uri, 4, 2)  # TRL's name history


def test_hover_on_a_refused_geometry_says_why_there_is_no_schedule(server):
    uri = server.open(QWEN)
    server.wait_publish(uri)
    shown = server.hover(uri, line_of(QWEN.read_text(), "num_generations"), 2)
    assert "the generation batch 64 is not a multiple of num_generations 14" in shown


def test_completion_offers_unset_keys_enum_values_and_profile_rewards(server, tmp_path):
    text = "num_generations: 8\nloss_type: \n\nreward_funcs:\n  - \n"
    uri = open_text(server, tmp_path, "complete.yaml", text)
    server.wait_publish(uri)
    keys = {item["label"]: item for item in server.complete(uri, 2, 0)}
    assert "steps_per_generation" in keys and "num_generations" not in keys
    assert keys["steps_per_generation"]["detail"] == "default null"
    assert keys["beta"]["detail"] == "default 0.0"
    values = [item["label"] for item in server.complete(uri, 1, len("loss_type: "))]
    assert values[:3] == ["grpo", "dr_grpo", "dapo"] and "vespo" in values
    rewards = [item["label"] for item in server.complete(uri, 4, 4)]
    assert rewards == [
        "accuracy_reward",
        "reasoning_accuracy_reward",
        "think_format_reward",
        "get_soft_overlong_punishment",
    ]
    profiled = "# grpo: --profile open-r1\n" + text
    uri = open_text(server, tmp_path, "complete-r1.yaml", profiled)
    server.wait_publish(uri)
    rewards = [item["label"] for item in server.complete(uri, 5, 4)]
    assert "accuracy" in rewards and "format" in rewards and "accuracy_reward" not in rewards
    keys = [item["label"] for item in server.complete(uri, 3, 0)]
    assert "dataset_prompt_column" in keys and "system_prompt" in keys  # the profile's script keys


def test_a_syntax_error_is_positioned(server, tmp_path):
    text = "num_generations: 8\nbeta: [0.1\nloss_type: grpo\n"
    uri = open_text(server, tmp_path, "broken.yaml", text)
    found = server.wait_publish(uri)
    expected = check_text(text).diagnostics[0]
    assert codes(found) == ["GRPO-Y001"] and found[0]["severity"] == ERROR
    assert found[0]["range"]["start"]["line"] == expected.line - 1 >= 1
    tabs = open_text(server, tmp_path, "tabs.yaml", "model_init_kwargs:\n\tdtype: bfloat16\n")
    assert [(d["code"], d["range"]["start"]["line"]) for d in server.wait_publish(tabs)] == [("GRPO-Y002", 1)]


def test_a_grpo_comment_sets_the_world_size_and_a_bad_one_is_reported(server, tmp_path):
    text = QWEN.read_text()
    at_7 = open_text(server, tmp_path, "ws7.yaml", "# grpo: --world-size 7\n" + text)
    assert "GRPO-B001" not in codes(server.wait_publish(at_7))  # 16 x 7 x 4 = 448 holds 32 groups of 14
    assert "**Schedule at world size 7** (`# grpo:` comment, line 1)" in server.hover(at_7, 8, 2)
    bad = open_text(server, tmp_path, "bad-comment.yaml", "# grpo: --world-size eight\nnum_generations: 8\n")
    found = server.wait_publish(bad)
    # The engine's warning, the same one `grpo validate` prints for this file.
    assert [d["range"]["start"]["line"] for d in found if d["code"] == "GRPO-Y015"] == [0]
    assert "--world-size" in found[0]["message"] and found[0]["code"] == "GRPO-Y015"
    unknown = open_text(server, tmp_path, "bad-profile.yaml", "# grpo: --profile nope\nnum_generations: 8\n")
    assert "unknown profile" in server.wait_publish(unknown)[0]["message"]


def test_num_processes_in_the_file_is_the_world_size(server, tmp_path):
    uri = open_text(server, tmp_path, "np.yaml", QWEN.read_text() + "num_processes: 7\n")
    assert "GRPO-B001" not in codes(server.wait_publish(uri))


def test_client_settings_set_the_world_size_and_a_comment_wins_over_them(tmp_path):
    client = start_server(initialization_options={"grpo": {"worldSize": 7}})
    try:
        uri = open_text(client, tmp_path, "init.yaml", QWEN.read_text())
        assert "GRPO-B001" not in codes(client.wait_publish(uri))
        commented = open_text(client, tmp_path, "c.yaml", "# grpo: --world-size 1\n" + QWEN.read_text())
        assert "GRPO-B001" in codes(client.wait_publish(commented))
        seen = len(client.published[uri])
        client.notify("workspace/didChangeConfiguration", {"settings": {"grpo": {"worldSize": 3}}})
        assert "GRPO-B001" in codes(client.wait_publish(uri, after=seen))  # 16 x 3 x 4 = 192, not a multiple of 14
    finally:
        client.close()


def test_fast_typing_is_debounced_and_only_the_latest_text_is_published(server, tmp_path):
    text = QWEN.read_text()
    uri = open_text(server, tmp_path, "typing.yaml", text)
    server.wait_publish(uri)
    before = len(server.published[uri])
    line = line_of(text, "num_generations")
    version = None
    for character in "0000000016":  # `num_generations: 14` typed over, one keystroke at a time, as incremental edits
        version = server.change(
            uri, character, {"start": {"line": line, "character": 17}, "end": {"line": line, "character": 19}}
        )
    final = server.wait_publish(uri, version)
    assert "GRPO-B001" not in codes(final)  # the server's text is `num_generations: 16`
    publishes = server.published[uri][before:]
    assert publishes[-1][1] == version and len(publishes) < 10  # coalesced, and no stale result after the last


def test_without_the_lsp_extra_the_command_says_what_to_install():
    code = "import sys; sys.modules['pygls'] = None; from grpo_schema.cli import main; sys.exit(main(['lsp']))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "this command needs the lsp extra: pip install 'grpo-config[lsp]'" in done.stderr


def test_an_item_level_diagnostic_covers_the_list_item(server, tmp_path):
    text = (
        "model_name_or_path: m\ndataset_name: d\nreward_funcs:\n  - accuracy_reward\n  - accuracy_rewrd  # mine\n"
        "reward_weights: [1.0, 1.0]\n"
    )
    uri = open_text(server, tmp_path, "items.yaml", text)
    item = next(d for d in server.wait_publish(uri) if d["code"] == "GRPO-R002")
    assert item["range"] == {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 18}}
    flow = open_text(server, tmp_path, "flow.yaml", "reward_funcs: [accuracy_reward, accuracy_rewrd]\n")
    item = next(d for d in server.wait_publish(flow) if d["code"] == "GRPO-R002")
    assert (item["range"]["start"]["character"], item["range"]["end"]["character"]) == (32, 46)


def test_declared_hardware_sets_the_world_size_and_checks_the_fit(server, tmp_path):
    text = QWEN.read_text()
    uri = open_text(server, tmp_path, "hw.yaml", "# grpo: --hardware 1xH100-80GB --world-size 7\n" + text)
    found = server.wait_publish(uri)
    assert "GRPO-H007" in codes(found) and "GRPO-B001" not in codes(found)  # 7 processes on 1 GPU
    uri = open_text(server, tmp_path, "hw8.yaml", "# grpo: --hardware 8xH100-80GB\n" + text)
    server.wait_publish(uri)
    assert "**Schedule at world size 8** (the GPUs of `--hardware 8xH100-80GB`)" in server.hover(uri, 8, 2)
    uri = open_text(server, tmp_path, "hw-bad.yaml", "# grpo: --hardware 8xFOO\n" + text)
    assert [d["range"]["start"]["line"] for d in server.wait_publish(uri) if d["code"] == "GRPO-Y015"] == [0]


@pytest.mark.parametrize(
    ("release", "severity", "says"),
    [
        ("banana", ERROR, "not a TRL version: 'banana'"),
        ("9.0", WARNING, "newer than the newest table (1.16.0); judging it as 1.16.0"),  # what grpo validate warns
    ],
)
def test_a_bad_release_in_the_editors_settings_is_said_on_every_document(server, tmp_path, release, severity, says):
    server.notify("workspace/didChangeConfiguration", {"settings": {"grpo": {"trlVersion": release}}})
    try:
        uri = open_text(server, tmp_path, f"release-{release}.yaml", QWEN.read_text())
        found = [d for d in server.wait_publish(uri) if d["code"] == "grpo-settings"]
        assert [d["severity"] for d in found] == [severity] and says in found[0]["message"], found
        assert "trlVersion" in found[0]["message"]
    finally:
        server.notify("workspace/didChangeConfiguration", {"settings": {"grpo": {}}})


def test_a_python_script_gets_diagnostics_fixes_and_hover_through_the_server(server, tmp_path):
    """The handlers' path for .py documents (the answers themselves: tests/dialects/test_python_lsp.py)."""
    text = (REPO / "tests" / "dialects" / "python_files" / "plain_batch.py").read_text()
    uri = open_text(server, tmp_path, "train.py", text)
    (b001,) = server.wait_publish(uri)
    assert b001["code"] == "GRPO-B001" and b001["range"]["start"] == {"line": 6, "character": 4}
    actions = server.code_actions(uri, (6, 4), (6, 10))
    assert actions and actions[0]["title"].startswith("GRPO-B001: per_device_train_batch_size 1 -> 4")
    assert "Schedule at world size 1" in server.hover(uri, 2, 9)
