"""Prompt lengths from the data: the distribution (p50, p95, max) of a local dataset's prompts, counted with the
model's own tokenizer after its chat template, held to what transformers' apply_chat_template gives for the same
rows; every place a dataset can be on this machine; the estimate when the tokenizer is not here; the plan at p95
with the longest stated (GRPO-H011 when only the longest does not fit); and no torch in grpo_schema's process."""

import json
import subprocess
import sys

import pytest

from grpo_schema.commands.plan import check_for_hardware, memory_lines
from grpo_schema.engine.hardware.prompts import data_prompt_lengths, percentile
from tests.support.cli import grpo

pytest.importorskip("tokenizers", reason="the tokenizer is read with the tokenizers package")
pytest.importorskip("transformers", reason="transformers' apply_chat_template is the oracle")

# A Qwen-like template: a default system message, stripped contents, the generation prompt, and a template variable
# (enable_thinking) that chat_template_kwargs sets.
TEMPLATE = (
    "{{ bos_token }}{%- if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a careful "
    "assistant.<|im_end|>\n{%- endif %}{%- for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{{ m['content'] | trim }}<|im_end|>\n{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{%- if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{%- endif %}"
    "{%- endif %}"
)
WORDS = "solve the equation for x then explain each step of the proof carefully and check the answer twice".split()
LLAMA = {
    "model_type": "llama",
    "hidden_size": 256,
    "num_hidden_layers": 4,
    "intermediate_size": 768,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 400,
    "torch_dtype": "float32",
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A byte-level BPE tokenizer trained here (BOS added to plain text by its post-processor), its chat template,
    and a Llama config.json: a model folder as from_pretrained reads one."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("model")
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        [" ".join(WORDS)] * 20,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<s>", "</s>", "<|im_start|>", "<|im_end|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    core.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="</s>")
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(folder)
    (folder / "config.json").write_text(json.dumps(LLAMA))
    return folder


def conversations(count=60):
    """Prompts of 3 to 60 words, one of them with its own system message."""
    rows = [
        {"prompt": [{"role": "user", "content": " ".join(WORDS[i % 7 :] * (1 + i % 4))[: 20 + 9 * i]}]}
        for i in range(count)
    ]
    rows[5]["prompt"].insert(0, {"role": "system", "content": "Answer in one line."})
    return rows


def oracle(folder, rows, **kwargs):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    lengths = []
    for row in rows:
        prompt = row["prompt"]
        if isinstance(prompt, str):
            lengths.append(len(tokenizer(prompt)["input_ids"]))
        else:
            lengths.append(
                len(
                    tokenizer.apply_chat_template(
                        prompt, add_generation_prompt=True, tokenize=True, return_dict=True, **kwargs
                    )["input_ids"]
                )
            )
    lengths.sort()
    return percentile(lengths, 0.5), percentile(lengths, 0.95), lengths[-1]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_conversations_are_counted_as_apply_chat_template_counts_them(model_dir, tmp_path):
    rows = conversations()
    data = write_jsonl(tmp_path / "train.jsonl", rows)
    got = data_prompt_lengths(str(data), model=str(model_dir))
    assert (got.p50, got.p95, got.longest) == oracle(model_dir, rows)
    assert got.rows == 60 and got.source == str(data) and "after its chat template" in got.counted
    kwargs = {"enable_thinking": False}  # chat_template_kwargs reach the template
    thinking_off = data_prompt_lengths(str(data), model=str(model_dir), template_kwargs=kwargs)
    assert (thinking_off.p50, thinking_off.p95, thinking_off.longest) == oracle(model_dir, rows, **kwargs)
    assert thinking_off.p50 > got.p50


def test_plain_prompts_get_the_tokenizers_special_tokens(model_dir, tmp_path):
    rows = [{"prompt": " ".join(WORDS[: 2 + i])} for i in range(15)]
    got = data_prompt_lengths(str(write_jsonl(tmp_path / "plain.jsonl", rows)), model=str(model_dir))
    assert (got.p50, got.p95, got.longest) == oracle(model_dir, rows)


def test_every_place_a_dataset_is_on_this_machine(model_dir, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets", reason="save_to_disk and the cache are written with datasets")
    import pyarrow.parquet as pq

    rows = conversations(40)
    expected = oracle(model_dir, rows)
    table = datasets.Dataset.from_list(rows)
    pq.write_table(table.data.table, tmp_path / "rows.parquet")
    table.save_to_disk(tmp_path / "saved")
    datasets.DatasetDict({"train": table, "test": table.select(range(3))}).save_to_disk(tmp_path / "dict")
    (tmp_path / "files" / "data").mkdir(parents=True)
    write_jsonl(tmp_path / "files" / "data" / "test.jsonl", rows[:2])
    write_jsonl(tmp_path / "files" / "data" / "train.jsonl", rows)
    # the caches: load_dataset's prepared arrow file and a Hub snapshot's parquet file
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    prepared = tmp_path / "hf" / "datasets" / "acme___maths" / "default" / "0.0.0" / "abc123"
    prepared.mkdir(parents=True)
    (prepared / "maths-train.arrow").write_bytes(next((tmp_path / "saved").glob("*.arrow")).read_bytes())
    snapshot = tmp_path / "hf" / "hub" / "datasets--acme--proofs" / "snapshots" / "f00" / "data"
    snapshot.mkdir(parents=True)
    pq.write_table(table.data.table, snapshot / "train-00000-of-00001.parquet")
    for name in (
        tmp_path / "rows.parquet",
        tmp_path / "saved",
        tmp_path / "dict",
        tmp_path / "files",
        "acme/maths",
        "acme/proofs",
    ):
        got = data_prompt_lengths(str(name), model=str(model_dir))
        assert got is not None and (got.p50, got.p95, got.longest) == expected and got.rows == 40, name
    assert data_prompt_lengths("acme/absent", model=str(model_dir)) is None
    assert data_prompt_lengths("../../etc/passwd", model=str(model_dir)) is None


def test_without_the_tokenizer_the_estimate_says_so(tmp_path):
    folder = tmp_path / "config-only"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA))
    data = write_jsonl(tmp_path / "train.jsonl", [{"prompt": "x" * 400}, {"prompt": "y" * 40}])
    got = data_prompt_lengths(str(data), model=str(folder))
    assert (got.p50, got.longest) == (10, 100)
    assert got.counted == "estimated at 4 characters a token (the model's tokenizer is not on this machine)"


def plan_config(model_dir, data, **extra):
    return {
        "model_name_or_path": str(model_dir),
        "dataset_name": str(data),
        "reward_funcs": ["accuracy_reward"],
        "per_device_train_batch_size": 8,
        "num_generations": 8,
        "max_completion_length": 64,
        **extra,
    }


def test_the_plan_is_made_at_p95_and_states_the_longest(model_dir, tmp_path):
    rows = conversations()
    data = write_jsonl(tmp_path / "train.jsonl", rows)
    p50, p95, longest = oracle(model_dir, rows)
    _, report = check_for_hardware(plan_config(model_dir, data), "run.yaml", "1xA10G-24GB", batch_fixes=False)
    assert report.setup.prompt_length == p95 and report.prompts.longest == longest
    line = next(line for line in memory_lines(report) if line.startswith("assumes prompts"))
    assert f"p50 {p50}, p95 {p95}, max {longest}" in line and str(data) in line
    _, given = check_for_hardware(
        plan_config(model_dir, data), "run.yaml", "1xA10G-24GB", prompt_length=100, batch_fixes=False
    )
    assert given.setup.prompt_length == 100 and given.prompts is None  # --prompt-length wins
    # max_prompt_length is no key TRL 1.16 reads: it changes nothing
    _, ignored = check_for_hardware(
        plan_config(model_dir, data, max_prompt_length=8), "run.yaml", "1xA10G-24GB", batch_fixes=False
    )
    assert ignored.setup.prompt_length == p95


def test_longest_prompt_that_does_not_fit_is_a_warning(model_dir, tmp_path):
    rows = [{"prompt": "solve x"} for _ in range(99)] + [{"prompt": " ".join(WORDS) * 300}]
    data = write_jsonl(tmp_path / "train.jsonl", rows)
    config = plan_config(model_dir, data, gradient_checkpointing=False, max_completion_length=16)
    _, report = check_for_hardware(config, "run.yaml", "2GB", batch_fixes=False)
    assert report.fits and report.prompts.longest > 20 * report.prompts.p95
    h011 = [d for d in report.diagnostics if d.code == "GRPO-H011"]
    assert len(h011) == 1 and f"longest ({report.prompts.longest} tokens)" in h011[0].message
    _, roomy = check_for_hardware(config, "run.yaml", "80GB", batch_fixes=False)
    assert not any(d.code == "GRPO-H011" for d in roomy.diagnostics)


def test_grpo_validate_hardware_prints_the_prompt_line_and_never_imports_torch(model_dir, tmp_path):
    import yaml

    data = write_jsonl(tmp_path / "train.jsonl", conversations())
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(plan_config(model_dir, data)))
    run = grpo("validate", str(path), "--hardware", "1xA10G-24GB")
    assert run.returncode == 0, run.stderr
    _, report = check_for_hardware(path.read_bytes(), str(path), "1xA10G-24GB", batch_fixes=False)
    prompt_line = next(line for line in memory_lines(report) if line.startswith("assumes prompts"))
    assert "  " + prompt_line in run.stdout
    probe = (
        "import sys; from grpo_schema.commands.plan import check_for_hardware; "
        f"r = check_for_hardware(open({str(path)!r}, 'rb').read(), 'run.yaml', '1xA10G-24GB')[1]; "
        "print(r.prompts.p95, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[1:] == ["False", "False"], out.stdout + out.stderr


def test_a_tokenizer_json_that_truncates_does_not_cap_the_count(model_dir, tmp_path):
    """A tokenizer.json saved with truncation on (some Hub tokenizers carry a max_length) is counted whole, as
    transformers counts it (it turns the saved truncation off unless a call asks for it)."""
    import shutil

    from tokenizers import Tokenizer

    folder = tmp_path / "truncating"
    shutil.copytree(model_dir, folder)
    core = Tokenizer.from_file(str(folder / "tokenizer.json"))
    core.enable_truncation(max_length=8)
    core.save(str(folder / "tokenizer.json"))
    rows = conversations(20)
    got = data_prompt_lengths(str(write_jsonl(tmp_path / "train.jsonl", rows)), model=str(folder))
    assert (got.p50, got.p95, got.longest) == oracle(folder, rows) and got.longest > 8
