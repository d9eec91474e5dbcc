"""The built-in model facts and accelerator specs: counts computed from the architecture match the published
totals, names resolve, specs parse, local config.json files are read (never a download)."""

import json

import pytest

from grpo_schema.engine.hardware import parse_hardware, read_config_json, resolve_model
from grpo_schema.engine.hardware.accelerators import HardwareError
from grpo_schema.engine.hardware.catalogue import HUB_TOTAL_COUNTS_TIED_HEAD, MODELS, VISION_TOWER_PARAMS, lookup
from grpo_schema.engine.hardware.models import UnknownModel, find_local_config


@pytest.mark.parametrize("key", sorted(MODELS))
def test_parameter_count_within_one_percent_of_published_total(key):
    model = MODELS[key]
    computed = model.total_params()
    if key in HUB_TOTAL_COUNTS_TIED_HEAD:
        computed += model.embedding_params()
    computed += VISION_TOWER_PARAMS.get(key, 0)
    assert abs(computed - model.published_params) / model.published_params < 0.01, (computed, model.published_params)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("Qwen/Qwen2.5-Math-7B", "Qwen2.5-7B"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "Qwen2.5-7B"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "DeepSeek-R1-Distill-Qwen-1.5B"),
        ("HuggingFaceTB/SmolLM2-1.7B-Instruct", "SmolLM2-1.7B"),
        ("microsoft/phi-4", "Phi-4"),
        ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.1-70B"),
        ("google/gemma-3-1b-it", "gemma-3-1b"),
        ("Qwen/Qwen3-8B", "Qwen3-8B"),
        ("Qwen/Qwen2-0.5B-Instruct", "Qwen2-0.5B"),
        ("Qwen/Qwen2.5-Math-1.5B-Instruct", "Qwen2.5-1.5B"),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen2.5-32B"),
        ("Qwen/Qwen3-4B-Instruct-2507", "Qwen3-4B"),
        ("Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B"),
        ("meta-llama/Llama-3.2-3B-Instruct", "Llama-3.2-3B"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3.1-8B"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("google/gemma-3-12b-it", "gemma-3-12b"),
        ("microsoft/Phi-3-mini-4k-instruct", "Phi-3-mini-4k"),
        ("microsoft/Phi-3.5-mini-instruct", "Phi-3-mini-4k"),
        ("microsoft/Phi-4-mini-instruct", "Phi-4-mini"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "Mistral-7B-v0.3"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "Mistral-Nemo"),
        ("mistralai/Mistral-Small-24B-Instruct-2501", "Mistral-Small-24B"),
        ("HuggingFaceTB/SmolLM-360M-Instruct", "SmolLM-360M"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "DeepSeek-R1-Distill-Llama-8B"),
        ("allenai/OLMo-2-1124-7B-Instruct", "OLMo-2-1124-7B"),
        ("allenai/OLMo-2-0425-1B-RLVR1", None),
        ("allenai/OLMo-2-1124-13B-DPO", "OLMo-2-1124-13B"),
    ],
)
def test_hub_names_resolve_to_their_family(name, expected):
    found = lookup(name)
    assert (found.name if found else None) == expected


def test_unknown_model_says_to_pass_its_config():
    with pytest.raises(UnknownModel, match="config.json"):
        resolve_model("someone/Private-Model-3B")


def test_local_config_json_wins_and_counts_from_architecture(tmp_path):
    config = {
        "model_type": "qwen2",
        "hidden_size": 896,
        "num_hidden_layers": 24,
        "intermediate_size": 4864,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }
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
    (snapshot / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "vocab_size": 100,
            }
        )
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert resolve_model("acme/Tiny").num_layers == 2
    # a revision names a ref inside the cache: one that climbs out of it reads nothing there (the service plans
    # with the revision a client sends)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "ref").write_text("../../elsewhere")  # were it read: snapshots/../../elsewhere
    (tmp_path / "elsewhere" / "config.json").write_text("{}")
    assert find_local_config("acme/Tiny", "../../elsewhere/ref") == snapshot / "config.json"


@pytest.mark.parametrize(
    "spec, nodes, per_node, memory",
    [
        ("8xH100-80GB", 1, 8, 80),
        ("2x8xA100-40GB", 2, 8, 40),
        ("80GB", 1, 1, 80),
        ("4x24GiB", 1, 4, 24),
        ("H200", 1, 1, 141),
        ("8 x a100", 1, 8, 80),
        ("A100-40G", 1, 1, 40),
    ],
)
def test_hardware_specs(spec, nodes, per_node, memory):
    hw = parse_hardware(spec)
    assert (hw.nodes, hw.gpus_per_node, hw.accelerator.memory_gib) == (nodes, per_node, memory)


@pytest.mark.parametrize("spec", ["", "8xZ999", "0xH100", "-3GB", "x" * 200])
def test_bad_hardware_specs_say_what_is_accepted(spec):
    with pytest.raises(HardwareError):
        parse_hardware(spec)


def test_the_demos_model_is_known_by_its_path_as_grpo_demo_writes_it(tiny_model_dir):
    from grpo_schema.engine.hardware.catalogue import DEMO_MODEL, demo_model

    written = read_config_json(tiny_model_dir / "config.json")  # the tiny model as grpo demo writes it
    for fact in (
        "hidden_size",
        "num_layers",
        "intermediate_size",
        "num_heads",
        "num_kv_heads",
        "vocab_size",
        "dim_head",
        "tie_word_embeddings",
        "torch_dtype",
    ):
        assert getattr(DEMO_MODEL, fact) == getattr(written, fact), fact
    assert DEMO_MODEL.total_params() == written.total_params()
    assert demo_model("demo/model") is demo_model("./demo/model/") is DEMO_MODEL
    assert demo_model("my/demo/model") is None and lookup("demo/model") is None  # by its path only


def test_the_demos_model_is_known_before_it_is_written_and_read_from_its_folder_once_it_is(tmp_path):
    # a service with runs on writes demo/model in a thread as it starts: the Demo recipe has an estimate meanwhile
    from grpo_schema.engine.hardware.catalogue import DEMO_MODEL
    from grpo_schema.engine.hardware.resolve import resolve_model

    assert resolve_model("demo/model", base=tmp_path) is DEMO_MODEL
    (tmp_path / "demo" / "model").mkdir(parents=True)
    (tmp_path / "demo" / "model" / "config.json").write_text(
        '{"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 3, "intermediate_size": 256, '
        '"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 50}'
    )
    read = resolve_model("demo/model", base=tmp_path)
    assert (read.hidden_size, read.num_layers, read.source) == (128, 3, "demo/model/config.json")
    with pytest.raises(UnknownModel):
        resolve_model("my/demo/model", base=tmp_path)
