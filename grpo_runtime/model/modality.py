"""What grpo_runtime trains: text-only causal language models on text prompts.

TRL's GRPOTrainer also trains vision-language models, on a dataset's `image` / `images` columns. grpo_runtime has
no image path: such a run is refused before training starts (never trained on the text alone, the images silently
dropped), from the model's config where it is on disk and, where it is not (`grpo smoke` on another machine's
recipe), from the model's name.
"""

from __future__ import annotations

import re

from grpo_runtime.common import CannotRun
from grpo_schema.engine.words import noun

IMAGE_COLUMNS = ("image", "images")
# Families whose checkpoints are image-text-to-text models, as their names on the Hub say it.
VISION_NAME = re.compile(
    r"(?:^|[-_/.])(vl|vlm|vision|llava[\w.]*|idefics\d*|smolvlm\d*|paligemma\d*|pixtral|"
    r"internvl[\d.]*|minicpm-v|florence[\d.]*|molmo)(?=$|[-_/.\d])",
    re.IGNORECASE,
)
ELSEWHERE = "TRL's trainer (`trl grpo`) trains vision-language models; grpo_runtime trains text-only causal LMs"


def named_vision_language(name: str) -> str | None:
    """The part of a model name that says it is a vision-language model (`VL` in Qwen2.5-VL-3B), or None."""
    found = VISION_NAME.search(str(name))
    return found.group(1) if found else None


def vision_language_class(model_config) -> str | None:
    """The image-text-to-text class of a transformers config that no causal-LM class loads, or None (a text model,
    or one whose causal-LM class exists, such as Gemma 3's)."""
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING

    if (
        type(model_config) in MODEL_FOR_CAUSAL_LM_MAPPING
        or type(model_config) not in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING
    ):
        return None
    return MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING[type(model_config)].__name__


def refuse_vision_language(config) -> None:
    """CannotRun for a policy checkpoint that is a vision-language model (its config read from disk or the Hub
    cache, as from_pretrained would); a config that cannot be read is left to from_pretrained to report."""
    from transformers import AutoConfig

    try:
        model_config = AutoConfig.from_pretrained(
            config.model_name_or_path, revision=config.model_revision, trust_remote_code=config.trust_remote_code
        )
    except (OSError, ValueError, KeyError):
        return
    if "AutoModelForCausalLM" in (getattr(model_config, "auto_map", None) or {}):
        return
    found = vision_language_class(model_config)
    if found is not None:
        raise CannotRun(
            f"model_name_or_path: {config.model_name_or_path} is a vision-language model ({found}); {ELSEWHERE}"
        )


def refuse_images(dataset, split: str) -> None:
    """CannotRun for prompt data with image columns: training on the text alone would drop the images."""
    found = [c for c in IMAGE_COLUMNS if c in dataset.column_names]
    if found:
        raise CannotRun(
            f"the {split} data has the image {noun(len(found), 'column')} {', '.join(found)}: these are "
            "prompts for a vision-language model, and grpo_runtime has no image path (it would train on "
            f"the text alone); {ELSEWHERE}"
        )
