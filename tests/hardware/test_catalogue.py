"""The built-in model facts and accelerator specs: counts computed from the architecture match the published
totals, names resolve, specs parse, local config.json files are read (never a download)."""

import json

import pytest

from grpo_schema.engine.hardware import parse_hardware, read_config_json, resolve_model
from grpo_schema.engine.hardware.accelerators import HardwareError
from grpo_schema.engine.hardware.catalogue import HUB_TOTAL_COUNTS_TIED_HEAD, MODELS, lookup
from grpo_schema.engine.hardware.models import UnknownModel


@pytest.mark.parametrize("key", sorted(MODELS))
def test_parameter_count_within_one_percent_of_published_total(key):
    model = MODELS[key]
    computed = model.total_params()
    if key in HUB_TOTAL_COUNTS_TIED_HEAD:
        computed += model.embedding_params()
    assert abs(computed - model.published_params) / model.published_params < 0.01, (computed, model.published_params)


@pytest.mark.parametrize("name, expected", [
    ("Qwen/Qwen2.5-Math-7B", "Qwen2.5-7B"), ("Qwen/Qwen2.5-Coder-7B-Instruct", "Qwen2.5-7B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "DeepSeek-R1-Distill-Qwen-1.5B"),
    ("HuggingFaceTB/SmolLM2-1.7B-Instruct", "SmolLM2-1.7B"), ("microsoft/phi-4", "Phi-4"),
    ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.1-70B"), ("google/gemma-3-1b-it", "gemma-3-1b"),
    ("Qwen/Qwen3-8B", "Qwen3-8B"),
])
def test_hub_names_resolve_to_their_family(name, expected):
    assert lookup(name).name == expected


def test_unknown_model_says_to_pass_its_config():
    with pytest.raises(UnknownModel, match="config.json"):
        resolve_model("someone/Private-Model-3B")


def test_local_config_json_wins_and_counts_from_architecture(tmp_path):
    config = {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "intermediate_size": 4864,
              "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
              "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    facts = resolve_model(str(tmp_path))
    assert facts.source.endswith("config.json")
    assert facts.total_params() == MODELS["qwen2.5-0.5b"].total_params()
    assert read_config_json(tmp_path / "config.json").attention_bias  # Qwen2 has q/k/v biases


def test_hub_cache_is_read_when_present(tmp_path, monkeypatch):
    snapshot = tmp_path / "models--acme--Tiny" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (tmp_path / "models--acme--Tiny" / "refs").mkdir()
    (tmp_path / "models--acme--Tiny" / "refs" / "main").write_text("abc")
    (snapshot / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64,
                                                      "num_hidden_layers": 2, "intermediate_size": 128,
                                                      "num_attention_heads": 4, "vocab_size": 100}))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert resolve_model("acme/Tiny").num_layers == 2


@pytest.mark.parametrize("spec, nodes, per_node, memory", [
    ("8xH100-80GB", 1, 8, 80), ("2x8xA100-40GB", 2, 8, 40), ("80GB", 1, 1, 80), ("4x24GiB", 1, 4, 24),
    ("H200", 1, 1, 141), ("8 x a100", 1, 8, 80), ("A100-40G", 1, 1, 40),
])
def test_hardware_specs(spec, nodes, per_node, memory):
    hw = parse_hardware(spec)
    assert (hw.nodes, hw.gpus_per_node, hw.accelerator.memory_gib) == (nodes, per_node, memory)


@pytest.mark.parametrize("spec", ["", "8xZ999", "0xH100", "-3GB", "x" * 200])
def test_bad_hardware_specs_say_what_is_accepted(spec):
    with pytest.raises(HardwareError):
        parse_hardware(spec)
