"""Run inside a .venv-trl/<release> interpreter: that release's own GRPOConfig and GRPOTrainer on choice values.

    python trainer_choice_child.py OUT.json CASES.json

CASES.json is [{"field": name, "value": v, "config": {other settings}}, ...]. For each case the release's GRPOConfig
is built with the value, then its GRPOTrainer on a tiny random-init model (built here, nothing downloaded) runs one
CPU step: the checks the release runs at init and at the first step. Writes {"release", "fields": [the case fields
its GRPOConfig has], "cases": [{"field", "value", "verdict": "accepts" | "refuses: <error>"}]}.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import io
import json
import os
import sys
import tempfile
import warnings

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
warnings.filterwarnings("ignore")


def tiny_model_and_tokenizer():
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "<unk>", "a", "b", "c", "d", "e"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        model_input_names=["input_ids", "attention_mask"],
    )
    tokenizer.padding_side = "left"
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(words),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    return LlamaForCausalLM(config), tokenizer


def reward(completions, **kwargs):
    return [float(len(c)) for c in completions]


def main() -> int:
    out, cases_path = sys.argv[1], sys.argv[2]
    cases = json.loads(open(cases_path).read())
    from datasets import Dataset
    from trl import GRPOConfig

    try:
        from trl import GRPOTrainer
    except Exception as exc:  # noqa: BLE001 - an environment built for the parser alone
        print(f"the release's GRPOTrainer does not import here: {exc}", file=sys.stderr)
        return 3

    names = {f.name for f in dataclasses.fields(GRPOConfig)}
    dataset = Dataset.from_dict({"prompt": ["a b c", "b c d", "c d e", "d e a"]})
    results = []
    for case in cases:
        if case["field"] not in names:
            continue
        settings = {k: v for k, v in case["config"].items() if k in names}
        model, tokenizer = tiny_model_and_tokenizer()
        with tempfile.TemporaryDirectory() as folder:
            args = dict(
                output_dir=folder,
                report_to="none",
                use_cpu=True,
                max_steps=1,
                per_device_train_batch_size=2,
                num_generations=2,
                max_completion_length=3,
                logging_steps=1,
                save_strategy="no",
                bf16=False,
                gradient_checkpointing=False,
                **settings,
            )
            args[case["field"]] = case["value"]
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    config = GRPOConfig(**{k: v for k, v in args.items() if k in names})
                    trainer = GRPOTrainer(
                        model=model, reward_funcs=reward, args=config, train_dataset=dataset, processing_class=tokenizer
                    )
                    trainer.train()
                verdict = "accepts"
            except Exception as exc:  # noqa: BLE001 - the release's own refusal is the verdict
                verdict = f"refuses: {type(exc).__name__}: {str(exc)[:300]}"
        results.append({"field": case["field"], "value": case["value"], "verdict": verdict})
    with open(out, "w") as fh:
        json.dump(
            {
                "release": importlib.metadata.version("trl"),
                "fields": sorted({c["field"] for c in cases} & names),
                "cases": results,
            },
            fh,
            indent=1,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
