"""Data sources, generation post-processing helpers and the optimizer/scheduler builders."""

import json
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from grpo_runtime.data.datasets import dataset_rows, load_prompts, mixture_shares, reward_columns
from grpo_runtime.generation.rollout import (
    crop_after_first_eos,
    decode_completions,
    eos_token_ids,
    pad_rows,
    tokenize_prompts,
)
from grpo_runtime.training.optim import build_optimizer, build_scheduler, decayed_parameter_names, warmup_steps
from tests.support.tiny import build_model, build_tokenizer

from .helpers import base_settings, validated

ROWS = [{"prompt": f"say {w}", "target": w} for w in ("cat", "dog", "sun", "moon")]


def config_for(tmp_path, **overrides):
    settings = base_settings(tmp_path / "model", tmp_path / "unused.jsonl", tmp_path / "out")
    settings.update(overrides)
    return validated(settings).config


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet", ".json"])
def test_local_files_of_every_format(tmp_path, suffix):
    path = tmp_path / f"prompts{suffix}"
    frame = pd.DataFrame(ROWS)
    writers = {
        ".jsonl": lambda: frame.to_json(path, orient="records", lines=True),
        ".csv": lambda: frame.to_csv(path, index=False),
        ".parquet": lambda: frame.to_parquet(path),
        ".json": lambda: path.write_text(json.dumps(ROWS)),
    }
    writers[suffix]()
    data = load_prompts(config_for(tmp_path, dataset_name=str(path)))
    assert data["prompt"] == [r["prompt"] for r in ROWS] and data["target"] == [r["target"] for r in ROWS]


def test_saved_dataset_folder_and_remove_unused_columns(tmp_path):
    from datasets import Dataset

    Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    data = load_prompts(config_for(tmp_path, dataset_name=str(tmp_path / "saved"), remove_unused_columns=True))
    assert data.column_names == ["prompt"] and len(data) == 4


def test_mixture_with_fractions_and_columns(tmp_path):
    for name, rows in (("a", ROWS * 5), ("b", ROWS)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    entries = [
        {"path": "json", "data_files": str(tmp_path / f"{n}.jsonl"), "fraction": 0.5, "columns": ["prompt"]}
        for n in ("a", "b")
    ]
    data = load_prompts(config_for(tmp_path, datasets=entries))
    assert len(data) == 8 and data.column_names == ["prompt"]  # capped so that b (4 rows) is not oversampled


def test_mixture_shares():
    assert mixture_shares([10, 4], [None, None]) == [10, 4]
    assert mixture_shares([10, 4], [0.5, 0.5]) == [4, 4]
    assert mixture_shares([100, 100], [3, 1]) == [100, 33]
    with pytest.raises(ValueError, match="every dataset"):
        mixture_shares([1, 2], [0.5, None])


def test_missing_prompt_column_is_refused(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"question": "x"}\n')
    with pytest.raises(ValueError, match="no 'prompt' column"):
        load_prompts(config_for(tmp_path, dataset_name=str(tmp_path / "p.jsonl")))


def test_dataset_rows_is_one_read_per_batch_with_the_rows_of_per_row_reads():
    from datasets import Dataset

    data = Dataset.from_list([{**row, "idx": i} for i, row in enumerate(ROWS)])
    indices = [2, 2, 0, 3, 2, 1]  # repeats and any order, as generation batches have
    assert dataset_rows(data, indices) == [data[i] for i in indices]
    assert list(dataset_rows(data, [1])[0]) == data.column_names  # columns keep their order


def test_reward_columns_skip_prompt_and_completion():
    assert reward_columns([{"prompt": 1, "completion": 2, "a": 3}, {"prompt": 4, "completion": 5, "a": 6}]) == {
        "a": [3, 6]
    }


def test_padding_and_cropping():
    assert pad_rows([[1, 2], [3]], 0, "left").tolist() == [[1, 2], [0, 3]]
    assert pad_rows([[1, 2], [3]], 9, "right", multiple=4).tolist() == [[1, 2, 9, 9], [3, 9, 9, 9]]
    rows = torch.tensor([[5, 3, 6], [5, 6, 7], [4, 5, 4]])
    assert crop_after_first_eos(rows, [3, 4]) == [[5, 3], [5, 6, 7], [4]]


def test_prompt_tokenization_eos_set_and_decoding():
    tokenizer = build_tokenizer()
    model = build_model(tokenizer)
    model.generation_config.eos_token_id = [tokenizer.convert_tokens_to_ids("no"), tokenizer.eos_token_id]
    assert eos_token_ids(tokenizer, model) == model.generation_config.eos_token_id
    model.generation_config.eos_token_id = 5
    assert eos_token_ids(tokenizer, model) == [tokenizer.eos_token_id, 5]
    chat = tokenize_prompts(tokenizer, [[{"role": "user", "content": "say cat"}]], None)[0]
    assert tokenizer.convert_ids_to_tokens(chat) == [
        "<|im_start|>",
        "user",
        "say",
        "cat",
        "<|im_end|>",
        "<|im_start|>",
        "assistant",
    ]
    assert tokenize_prompts(tokenizer, ["say cat"], None) == [tokenizer.convert_tokens_to_ids(["say", "cat"])]
    ids = tokenizer.convert_tokens_to_ids(["cat", "dog", "<|im_end|>"])
    assert decode_completions(tokenizer, [ids], True) == [[{"role": "assistant", "content": "cat dog"}]]
    assert decode_completions(tokenizer, [ids], False) == ["cat dog"]


def test_weight_decay_skips_biases_and_norms(tmp_path):
    model = build_model(build_tokenizer())
    decayed = decayed_parameter_names(model)
    assert "model.layers.0.self_attn.q_proj.weight" in decayed
    assert not any("norm" in name for name in decayed)
    config = config_for(
        tmp_path,
        weight_decay=0.1,
        optim="adamw_torch",
        warmup_steps=0.25,
        lr_scheduler_type="linear",
        learning_rate=1.0,
    )
    optimizer = build_optimizer(model, config)
    assert [g["weight_decay"] for g in optimizer.param_groups] == [0.1, 0.0]
    assert sum(len(g["params"]) for g in optimizer.param_groups) == len(list(model.parameters()))
    scheduler = build_scheduler(optimizer, config, total_steps=8)
    lrs = []
    for _ in range(4):
        lrs.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    assert lrs == [0.0, 0.5, 1.0, pytest.approx(5 / 6)]  # ceil(0.25 * 8) = 2 warm-up steps, then linear decay
    assert warmup_steps(3, 100) == 3 and warmup_steps(0.1, 95) == 10


def test_unsupported_optimizers_and_schedules_are_refused(tmp_path):
    model = build_model(build_tokenizer())
    with pytest.raises(ValueError, match="optim 'galore_adamw' is not supported"):
        build_optimizer(model, config_for(tmp_path, optim="galore_adamw"))
    optimizer = build_optimizer(model, config_for(tmp_path, optim="sgd", optim_args="momentum=0.9,nesterov=true"))
    assert optimizer.param_groups[0]["momentum"] == 0.9 and optimizer.param_groups[0]["nesterov"] is True
    plateau = SimpleNamespace(**{**config_for(tmp_path).model_dump(), "lr_scheduler_type": "reduce_lr_on_plateau"})
    with pytest.raises(ValueError, match="needs evaluation metrics"):  # the schema refuses it too (without eval)
        build_scheduler(optimizer, plateau, 10)


def test_bitsandbytes_optimizers_are_built_as_the_hf_trainer_builds_them(tmp_path):
    bnb = pytest.importorskip("bitsandbytes.optim", reason="the bitsandbytes optimizers need bitsandbytes")
    from grpo_runtime.training.optim import optimizer_class

    def built(name, **extra):
        return optimizer_class(
            config_for(tmp_path, optim=name, adam_beta1=0.8, adam_beta2=0.95, adam_epsilon=1e-6, **extra)
        )

    assert built("paged_adamw_8bit") == (bnb.AdamW, dict(betas=(0.8, 0.95), eps=1e-6, is_paged=True, optim_bits=8))
    assert built("adamw_bnb_8bit") == (bnb.AdamW, dict(betas=(0.8, 0.95), eps=1e-6, is_paged=False, optim_bits=8))
    assert built("paged_adamw_32bit")[1]["optim_bits"] == 32
    assert built("lion_8bit") == (bnb.Lion, dict(betas=(0.8, 0.95), is_paged=False, optim_bits=8))  # no eps
    assert built("rmsprop_bnb", optim_args="alpha=0.9,momentum=0.5") == (
        bnb.RMSprop,
        dict(alpha=0.9, momentum=0.5, optim_bits=32),
    )
    cls, kwargs = built("ademamix_8bit", optim_args="beta3=0.999,alpha=8,t_alpha=100")
    assert cls is bnb.AdEMAMix and kwargs == dict(
        betas=(0.8, 0.95, 0.999), alpha=8.0, eps=1e-6, t_alpha=100, is_paged=False, optim_bits=8
    )


def test_an_8bit_optimizer_steps_with_8bit_states_and_32bit_embeddings(tmp_path):
    pytest.importorskip("bitsandbytes", reason="the bitsandbytes optimizers need bitsandbytes")
    torch.manual_seed(0)
    model = build_model(build_tokenizer())
    optimizer = build_optimizer(model, config_for(tmp_path, optim="paged_adamw_8bit", learning_rate=1e-2))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    model(input_ids=torch.tensor([[4, 5, 6, 7]]), labels=torch.tensor([[4, 5, 6, 7]])).loss.backward()
    optimizer.step()
    params = dict(model.named_parameters())
    assert all(not torch.equal(before[n], p) for n, p in params.items() if p.grad is not None)
    states = {n: optimizer.state[p] for n, p in params.items()}
    assert states["model.layers.0.mlp.up_proj.weight"]["state1"].dtype == torch.uint8  # 8-bit (>= 4096 values)
    assert states["model.embed_tokens.weight"]["state1"].dtype == torch.float32  # embeddings kept in 32-bit


def test_test_split_for_evaluation(tmp_path):
    folder = tmp_path / "splits"
    folder.mkdir()
    for split, rows in (("train", ROWS), ("test", ROWS[:2])):
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(load_prompts(config_for(tmp_path, dataset_name=str(folder)), "test")) == 2
    single = config_for(tmp_path, dataset_name=str(folder / "train.jsonl"))
    with pytest.raises(ValueError, match="holds one split only"):
        load_prompts(single, "test")
    entries = [{"path": "json", "data_files": str(folder / "train.jsonl")}]
    with pytest.raises(ValueError, match="set test_split_size"):
        load_prompts(config_for(tmp_path, datasets=entries), "test")
    split = config_for(tmp_path, datasets=entries, test_split_size=0.25)
    assert len(load_prompts(split, "test")) == 1 and len(load_prompts(split)) == 3
