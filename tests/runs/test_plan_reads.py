"""POST /api/v1/plan with runs on plans with the data's prompt lengths, as `grpo validate --hardware` does in the
service's folder: the same prompt-length line and the same GRPO-H011 for the Demo recipe (its demo/model and
demo/data) and for a dataset written here. What it reads is what a run of the same client would read: a relative
path from the service's folder, an absolute one or one leading out only with the runs token, `~` never; each
refusal is said in the plan. With runs off nothing is read, and the plan says how to get the data's lengths.
A real `grpo serve --enable-runs` and real `grpo validate` processes."""

from __future__ import annotations

import json
import shutil

from tests.support.plan_reads import DEMO, PROMPT_LINE, folder, prompt_line, service, validate  # noqa: F401
from tests.support.service import TOKEN, Service


def plan(service, text: str, token: str | None = None, **params) -> dict:
    with service.client(token) as client:
        answer = client.post("/api/v1/plan", content=text, params=params, headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def h011(diagnostics: list[dict]) -> list[tuple]:
    return [(d["severity"], d["message"], d["hint"]) for d in diagnostics if d["code"] == "GRPO-H011"]


def test_the_demo_recipe_is_planned_with_its_datas_prompt_lengths_as_grpo_validate_plans_it(service, folder):
    text = DEMO.read_text()
    doc = plan(service, text, hardware="8GB", engine="trl")  # the release grpo validate models
    cli = validate(folder, text, "8GB")
    assert doc["memory_lines"] == cli["memory_lines"]
    line = prompt_line(doc["memory_lines"])
    assert "the 95th percentile of 64 rows of demo/data/train.jsonl" in line, line
    assert "counted with the tokenizer in demo/model after its chat template" in line, line
    # the Demo recipe's model is read from its folder too: the plan has a model, not GRPO-H005
    assert doc["model"]["name"] == "demo/model" and not any(d["code"] == "GRPO-H005" for d in doc["diagnostics"])
    assert doc["prompt_lengths"]["rows"] == 64 and doc["settings"]["prompt_length"] == doc["prompt_lengths"]["p95"]


def test_the_longest_prompt_that_does_not_fit_is_the_same_grpo_h011(service, folder):
    rows = [{"prompt": [{"role": "user", "content": "say cat"}]}] * 99
    rows.append({"prompt": [{"role": "user", "content": "say " * 20_000}]})
    (folder / "data").mkdir()
    (folder / "data" / "long.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: ./data/long.jsonl")
    doc = plan(service, text, hardware="8GB", engine="trl")
    cli = validate(folder, text, "8GB")
    assert doc["fits"] is True and h011(doc["diagnostics"]) == h011(cli["diagnostics"]) != []
    # the demo's word-level template: <|im_start|> user ...words... <|im_end|> <|im_start|> assistant
    assert "not at its longest (20005 tokens)" in h011(doc["diagnostics"])[0][1]
    assert prompt_line(doc["memory_lines"]) == prompt_line(cli["memory_lines"])
    assert "of 100 rows of data/long.jsonl" in prompt_line(doc["memory_lines"])


def test_a_path_outside_the_services_folder_is_read_only_for_the_runs_token(service, folder, tmp_path):
    outside = tmp_path / "elsewhere" / "train.jsonl"
    outside.parent.mkdir()
    shutil.copy(folder / "demo" / "data" / "train.jsonl", outside)
    for value in (str(outside), "../elsewhere/train.jsonl"):
        text = DEMO.read_text().replace("dataset_name: demo/data", f"dataset_name: {value}")
        refused = prompt_line(plan(service, text, hardware="8GB")["memory_lines"])
        assert refused.startswith(
            f"{PROMPT_LINE}512 tokens (a default: the service does not read dataset_name '{value}'"
        ), refused
        assert "send the runs token (Authorization: Bearer)" in refused and refused.endswith("; pass prompt_length)")
        wrong = prompt_line(plan(service, text, token="not-the-token", hardware="8GB")["memory_lines"])
        assert wrong == refused
        read = plan(service, text, token=TOKEN, hardware="8GB")
        assert read["prompt_lengths"]["rows"] == 64 and read["prompt_lengths"]["source"] == value, read
    home = DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: ~/train.jsonl")
    line = prompt_line(plan(service, home, token=TOKEN, hardware="8GB")["memory_lines"])
    assert "without expanding `~`; write the absolute path" in line


def test_a_link_out_of_the_folder_is_a_path_outside_it(service, folder, tmp_path):
    (tmp_path / "secret").mkdir()
    shutil.copy(folder / "demo" / "data" / "train.jsonl", tmp_path / "secret" / "train.jsonl")
    (folder / "linked").symlink_to(tmp_path / "secret")
    text = DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: linked")
    assert plan(service, text, hardware="8GB")["prompt_lengths"] is None
    assert plan(service, text, token=TOKEN, hardware="8GB")["prompt_lengths"]["rows"] == 64


def test_hub_names_are_read_from_the_services_caches_only(make_service, folder, tmp_path):
    snapshot = tmp_path / "hf" / "hub" / "datasets--acme--words" / "snapshots" / "f00" / "data"
    snapshot.mkdir(parents=True)
    shutil.copy(folder / "demo" / "data" / "train.jsonl", snapshot / "train.jsonl")
    service = make_service(cwd=folder, GRPO_WEB_RUNS_PREPARE_DEMO="0", HF_HOME=str(tmp_path / "hf"))
    cached = plan(
        service, DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: acme/words"), hardware="8GB"
    )
    assert cached["prompt_lengths"]["rows"] == 64 and cached["prompt_lengths"]["source"] == str(
        snapshot / "train.jsonl"
    )
    absent = plan(
        service, DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: acme/absent"), hardware="8GB"
    )
    assert prompt_line(absent["memory_lines"]) == (
        f"{PROMPT_LINE}512 tokens (a default: the dataset is not on this machine; pass prompt_length)"
    )
    unknown = plan(
        service,
        DEMO.read_text().replace("model_name_or_path: demo/model", "model_name_or_path: acme/unknown-model"),
        hardware="8GB",
    )
    h005 = next(d for d in unknown["diagnostics"] if d["code"] == "GRPO-H005")
    assert h005["message"] == (
        "unknown model 'acme/unknown-model': no model folder the service reads, its Hugging "
        "Face cache nor the built-in catalogue has it; run `grpo plan --model-config PATH` "
        "where its config.json is"
    )


def test_with_runs_off_nothing_is_read_and_the_plan_says_how_to_get_the_lengths(folder, tmp_path):
    service = Service(tmp_path / "runs", runs=False, cwd=folder).start()
    try:
        runs_off(service)
    finally:
        service.stop()


def runs_off(service) -> None:
    doc = plan(
        service,
        DEMO.read_text().replace(
            "model_name_or_path: demo/model", "model_name_or_path: HuggingFaceTB/SmolLM2-135M-Instruct"
        ),
        hardware="8GB",
    )
    line = prompt_line(doc["memory_lines"])
    assert doc["prompt_lengths"] is None and line.startswith(
        f"{PROMPT_LINE}512 tokens (a default: the service reads no dataset while its runs are off"
    ), line
    assert "grpo serve --enable-runs" in line
    demo = plan(service, DEMO.read_text(), hardware="8GB")  # the Demo's own model is known by its path
    assert not any(d["code"] == "GRPO-H005" for d in demo["diagnostics"]), demo["diagnostics"]
    local_model = plan(
        service,
        DEMO.read_text().replace("model_name_or_path: demo/model", "model_name_or_path: models/mine"),
        hardware="8GB",
    )
    assert any(
        d["code"] == "GRPO-H005" and "reads no model folder while its runs are off" in d["message"]
        for d in local_model["diagnostics"]
    )


def test_validate_planning_for_hardware_reads_what_the_plan_reads(service, folder):
    """POST /api/v1/validate with a `# grpo: --hardware` comment (a body small enough for the fast lane) and with
    ?hardware= give the memory lines `grpo validate --hardware` prints, so the form's diagnostics and its memory
    panel agree."""
    small = (
        "# grpo: --hardware 8GB\nmodel_name_or_path: demo/model\ndataset_name: demo/data\n"
        "reward_funcs: [grpo_runtime.data.reward_library.target_word_reward]\nper_device_train_batch_size: 32\n"
        "num_generations: 8\nmax_completion_length: 6\nuse_cpu: true\nbf16: false\n"
    )
    cli = validate(folder, small, "8GB")["memory_lines"]
    assert "of 64 rows of demo/data/train.jsonl" in prompt_line(cli)
    with service.client(None) as client:
        for params, text in (({}, small), ({"hardware": "8GB"}, DEMO.read_text())):
            answer = client.post(
                "/api/v1/validate", params=params, content=text, headers={"Content-Type": "application/yaml"}
            )
            assert answer.status_code == 200, answer.text
            assert prompt_line(answer.json()["memory_lines"]) == prompt_line(cli), params


def test_a_chat_template_written_in_the_config_is_rendered_only_for_the_runs_token(service):
    """An open-r1 recipe's chat_template is the client's own jinja: the sandbox bounds what it may touch, not how
    long it runs, so the service renders it (once a row) only for a client it would launch runs for."""
    text = DEMO.read_text() + "chat_template: \"{% for m in messages %}{{ m['content'] }} {% endfor %}\"\n"
    anyone = plan(service, text, hardware="8GB", profile="open-r1")
    holder = plan(service, text, token=TOKEN, hardware="8GB", profile="open-r1")
    assert anyone["prompt_lengths"]["counted"].endswith(
        "(the service renders a chat_template written in the config only for a client that sends the runs token; "
        "the model's own was used)"
    )
    assert anyone["prompt_lengths"] == plan(service, DEMO.read_text(), hardware="8GB")["prompt_lengths"] | {
        "counted": anyone["prompt_lengths"]["counted"]
    }  # the model's own template: the demo's counts
    assert holder["prompt_lengths"]["counted"].endswith("after its chat template")
    assert holder["prompt_lengths"]["max"] < anyone["prompt_lengths"]["max"]  # the recipe's: no role markers
