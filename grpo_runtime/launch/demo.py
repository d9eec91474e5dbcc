"""`grpo demo DIR`: a complete offline run that finishes on a laptop CPU in about a minute.

The task: each prompt asks for one of two words ("say cat", "please say star"), and the reward is the share of
words in the completion that equal it (`target_word_reward`). A random-init 2-layer model starts with rewards near
0.1 and learns to answer with the requested word within a few dozen steps; `metrics.jsonl` shows `reward` rising
towards 1.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_schema.api.modeline import MODELINE as SCHEMA_LINE
from grpo_schema.commands.export import SCHEMA_FILE, schema_text

CONFIG_TEMPLATE = """{schema}
# Written by `grpo demo`: a tiny random-init model learns to say the word each prompt asks for.
# Run with:  grpo train {config}
model_name_or_path: {model}
dataset_name: {data}
reward_funcs:
  - grpo_runtime.data.reward_library.target_word_reward
output_dir: {output}

per_device_train_batch_size: 32
num_generations: 8
max_completion_length: 6
temperature: 1.0
loss_type: dapo
beta: 0.0

learning_rate: {learning_rate}
lr_scheduler_type: constant
optim: adamw_torch
max_steps: 60
seed: 0

use_cpu: true
bf16: false
activation_checkpointing: false
logging_steps: 1
save_steps: 30
report_to: none
{generation}"""

# `grpo demo DIR --vllm`: generation by a vLLM engine inside the training process. The weights are loaded into it
# after every optimizer step, so the importance-sampling ratio (sampling/importance_sampling_ratio/*) stays near 1.
VLLM_SECTION = """
use_vllm: true
vllm_mode: colocate
vllm_max_model_length: 64
vllm_importance_sampling_correction: true
"""


def demo_rows(targets=("cat", "star"), repeats: int = 8) -> list[dict]:
    """One conversational prompt per target word and phrasing, repeated."""
    phrasings = ["say {}", "say the word {}", "please say {}", "{} please"]
    rows = [
        {"prompt": [{"role": "user", "content": p.format(word)}], "target": word} for word in targets for p in phrasings
    ]
    return rows * repeats


def write_demo(directory: str | Path, vllm: bool = False) -> Path:
    """Write DIR/model (tokenizer + random-init model), DIR/data/train.jsonl, DIR/config.yaml and the JSON Schema
    its modeline names. With `vllm`,
    the model has vLLM's CPU head size (64) and the config generates with a colocated vLLM engine."""
    from grpo_runtime.model.tiny import VLLM_SHAPE, save_tiny_model

    root = Path(directory).expanduser().resolve()
    (root / "data").mkdir(parents=True, exist_ok=True)
    save_tiny_model(root / "model", **(VLLM_SHAPE if vllm else {}))
    with (root / "data" / "train.jsonl").open("w", encoding="utf-8") as handle:
        for row in demo_rows():
            handle.write(json.dumps(row) + "\n")
    config_path = root / "config.yaml"
    (root / SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")  # the modeline's target: editors work offline
    config_path.write_text(
        CONFIG_TEMPLATE.format(
            schema=SCHEMA_LINE,
            config=config_path,
            model=root / "model",
            data=root / "data",
            output=root / "output",
            generation=VLLM_SECTION if vllm else "",
            # Higher rates collapse the policy onto one completion per prompt short of the best reward (entropy near 0,
            # every group flat: the run-health findings GRPO-A001/A008/A016); at these the reward rises to ~0.98.
            learning_rate=0.005 if vllm else 0.003,
        ),
        encoding="utf-8",
    )
    return config_path
