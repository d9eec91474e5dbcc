"""What grpo_runtime does with the fields of datasets and rewards."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, ignored, installed, refused, warn_if, warned
from grpo_runtime.support.fields.shared import EVAL_PREDICTIONS
from grpo_schema.engine.codes import U_FALLBACK, U_FEATURE, U_SPEED_ONLY

SYMBOLIC_ACCURACY = {"accuracy_reward", "reasoning_accuracy_reward", "accuracy", "cosine", "length"}


def _accuracy_without_math_verify(s: Setting) -> list[str]:
    """The rewards that compare answers symbolically (TRL's and open-r1's), when math-verify is missing."""
    names = [n for n in s.config.reward_funcs or [] if isinstance(n, str) and n in SYMBOLIC_ACCURACY]
    return names if names and not installed("math_verify") else []


WORKERS = (
    "rows are read in the training process: the same rows in the same order as TRL's DataLoader workers "
    "give, only the loading speed differs"
)


SAMPLER = "GRPOTrainer replaces the HF sampler and collator by its own; TRL 1.16 ignores it too"


FIELDS: dict[str, Support] = {
    "dataloader_drop_last": honoured(
        "evaluate.eval_batches (the training sampler's length is always a multiple of the batch, as in TRL)"
    ),
    "dataloader_in_order": ignored(
        "orders batches coming from several workers; rows are read in order here "
        "and TRL's sampler fixes the order anyway"
    ),
    "dataloader_multiprocessing_context": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_num_workers": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_persistent_workers": warned(WORKERS, U_SPEED_ONLY),
    "dataloader_pin_memory": ignored(
        "GRPO batches are lists of dataset rows (TRL's identity collator), which the "
        "DataLoader has no tensors to pin in, so TRL 1.16 ignores it too"
    ),
    "dataloader_prefetch_factor": warned(WORKERS, U_SPEED_ONLY),
    "dataset_config": honoured("data.load_local_or_hub"),
    "dataset_name": honoured("data.load_split"),
    "dataset_streaming": refused(
        "streaming datasets are not run: the prompt order needs the dataset's length",
        "set dataset_streaming: false (the dataset is then loaded whole)",
        U_FEATURE,
    ),
    "dataset_test_split": honoured("data.load_split (evaluation)"),
    "dataset_train_split": honoured("data.load_split"),
    "datasets": honoured("data.load_mixture"),
    "label_names": ignored(EVAL_PREDICTIONS),
    "length_column_name": ignored(SAMPLER),
    "multi_objective_aggregation": honoured("advantages.compute_advantages"),
    "remove_unused_columns": honoured("data.load_prompts"),
    "reward_funcs": honoured(
        "rewards.resolve_reward_func (open-r1's registry under its profile)",
        warn_if(
            _accuracy_without_math_verify,
            lambda s: (
                f"{', '.join(_accuracy_without_math_verify(s))} compare answers with math-verify in TRL, "
                "which is not installed here: a normalised exact match is used, which misses equivalent forms "
                "(0.5 and \\frac{1}{2})"
            ),
            U_FALLBACK,
        ),
    ),
    "reward_model_name_or_path": honoured("rewards.RewardModel"),
    "reward_weights": honoured("advantages.compute_advantages"),
    "scale_rewards": honoured("advantages.compute_advantages"),
    "shuffle_dataset": honoured("sampler.PromptOrder"),
    "streaming": refused(
        "streaming datasets are not run: the prompt order needs the dataset's length", "set streaming: false", U_FEATURE
    ),
    "test_split_size": honoured("data.load_mixture"),
    "train_sampling_strategy": ignored(SAMPLER),
}
