"""Small builders shared by the runtime tests: prompt files and validated configs."""

import json
from pathlib import Path
from types import SimpleNamespace

import yaml

from grpo_runtime.launch.demo import demo_rows


def write_prompts(path: Path, rows=None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for i, row in enumerate(rows if rows is not None else demo_rows(repeats=2)):
            handle.write(json.dumps({**row, "idx": i}) + "\n")
    return path


def base_settings(model_dir, data_path, output_dir) -> dict:
    """A config small enough for a CPU test: a few steps of the demo task on the tiny model."""
    return dict(
        model_name_or_path=str(model_dir),
        dataset_name=str(data_path),
        output_dir=str(output_dir),
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=4,
        learning_rate=0.01,
        max_steps=4,
        logging_steps=1,
        save_steps=2,
        seed=3,
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch",
        report_to="none",
        disable_tqdm=True,
    )


def validated(settings: dict, world_size: int = 1):
    """check_text on the YAML of `settings`; fails the test with the diagnostics if it is invalid."""
    from grpo_schema import check_text

    result = check_text(yaml.safe_dump(settings), world_size=world_size)
    errors = [d.to_dict() for d in result.diagnostics if d.severity == "error"]
    assert result.valid and result.plan is not None, errors
    return result


def read_metrics(output_dir) -> list[dict]:
    return [json.loads(line) for line in (Path(output_dir) / "metrics.jsonl").read_text().splitlines()]


# Prompts of three lengths (a left-padded batch); `prompt_batch` repeats the list, so the rows of one prompt are
# interleaved with the others rather than adjacent.
GENERATION_PROMPTS = ["say cat", "please say the word star", "say dog please"]


def generation_settings(**overrides):
    """The config fields `grpo_runtime.generation.rollout.generation_config` reads, TRL's defaults unless overridden."""
    values = dict(
        max_completion_length=8,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        min_p=None,
        repetition_penalty=1.0,
        cache_implementation=None,
        generation_kwargs=None,
    )
    return SimpleNamespace(**{**values, **overrides})


def prompt_batch(tokenizer, copies: int = 4, multiple: int | None = None):
    """(prompt token lists, dict(input_ids, attention_mask) left-padded) for GENERATION_PROMPTS * copies."""
    from grpo_runtime.generation.rollout import pad_rows, tokenize_prompts

    prompt_lists = tokenize_prompts(tokenizer, GENERATION_PROMPTS * copies, None)
    input_ids = pad_rows(prompt_lists, tokenizer.pad_token_id, "left", multiple)
    attention_mask = pad_rows([[1] * len(p) for p in prompt_lists], 0, "left", multiple)
    return prompt_lists, dict(input_ids=input_ids, attention_mask=attention_mask)
