"""grpo_runtime trains text-only causal LMs on text prompts: a vision-language checkpoint and prompts with image
columns are refused before training starts (exit 3, named), never trained on the text alone."""

import json

import pytest
import yaml

from grpo_runtime.launch.cli import train_command
from grpo_runtime.model.modality import named_vision_language


def run_file(tmp_path, model, rows) -> str:
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    path = tmp_path / "run.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "model_name_or_path": str(model),
                "dataset_name": str(data),
                "reward_funcs": ["tests.runtime.health_rewards.constant_reward"],
                "num_generations": 2,
                "per_device_train_batch_size": 2,
                "max_steps": 1,
                "max_completion_length": 4,
                "use_cpu": True,
                "report_to": "none",
                "output_dir": str(tmp_path / "out"),
            }
        )
    )
    return str(path)


PROMPTS = [{"prompt": [{"role": "user", "content": "say cat"}]}] * 4


def test_a_vision_language_checkpoint_is_refused_before_it_loads(tmp_path, capsys):
    from transformers import Qwen2VLConfig

    model = tmp_path / "vl-model"
    Qwen2VLConfig().save_pretrained(model)  # a config alone: the refusal comes before any weight is read
    assert train_command([run_file(tmp_path, model, PROMPTS)]) == 3
    err = capsys.readouterr().err
    assert "is a vision-language model (Qwen2VLForConditionalGeneration)" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "checkpoint-1").exists()


def test_prompts_with_an_image_column_are_refused_not_trained_on_their_text(tmp_path, tiny_model_dir, capsys):
    rows = [{**row, "image": f"img{i}.png"} for i, row in enumerate(PROMPTS)]
    assert train_command([run_file(tmp_path, tiny_model_dir, rows)]) == 3
    err = capsys.readouterr().err
    assert "the train data has the image column image:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "name, said",
    [
        ("Qwen/Qwen2.5-VL-3B-Instruct", "VL"),
        ("Qwen/Qwen3-VL-8B-Instruct", "VL"),
        ("meta-llama/Llama-3.2-11B-Vision-Instruct", "Vision"),
        ("HuggingFaceTB/SmolVLM-Instruct", "SmolVLM"),
        ("llava-hf/llava-1.5-7b-hf", "llava"),
        ("OpenGVLab/InternVL2-8B", "InternVL2"),
        ("/fsx/team/ckpt/Qwen2.5-VL-7B-grpo", "VL"),
        ("Qwen/Qwen2.5-7B-Instruct", None),
        ("google/gemma-3-4b-it", None),
        ("HuggingFaceTB/SmolLM2-1.7B", None),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", None),
        ("/workspace/evolve/qwen", None),
    ],
)
def test_a_models_name_says_whether_it_is_vision_language(name, said):
    assert named_vision_language(name) == said
