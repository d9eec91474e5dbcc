"""Accept/reject parity with TRL 1.16's own config rules, over generated configs and world sizes 1-16.

TRL is the oracle: `GRPOConfig(**values)` either builds or raises, with its world size patched to the declared one
(TRL reads it from the launcher). bf16 is neutralised with use_cpu=True, as TRL's bf16 default would otherwise
fail on any machine without a bf16 GPU. Generated values stay inside our field ranges and touch only fields TRL
checks when the config is built, so both sides judge the same rules.
"""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
trl = pytest.importorskip("trl", reason="TRL 1.16 is a test-only oracle (pip install -e '.[test]')")

from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grpo_schema import check_mapping  # noqa: E402
from tests.trl_oracle import build_grpo_config  # noqa: E402

pytestmark = pytest.mark.oracle

maybe = lambda strategy: st.one_of(st.none(), strategy)  # noqa: E731

CONFIGS = st.fixed_dictionaries(
    {
        "per_device_train_batch_size": st.integers(1, 8),
        "num_generations": st.integers(2, 16),
        "gradient_accumulation_steps": st.integers(1, 8),
        "num_iterations": st.integers(1, 3),
    },
    optional={
        "generation_batch_size": st.integers(1, 128),
        "steps_per_generation": st.integers(1, 8),
        "eval_strategy": st.sampled_from(["no", "steps", "epoch"]),
        "per_device_eval_batch_size": st.integers(1, 8),
        "num_generations_eval": maybe(st.integers(0, 8)).filter(lambda v: v != 1),
        "fp16": st.booleans(),
        "bf16": maybe(st.booleans()),
        "auto_find_batch_size": st.booleans(),
        "log_completions": st.booleans(),
        "log_completions_hub_repo": maybe(st.just("me/completions")),
        "vllm_importance_sampling_correction": st.booleans(),
        "vllm_importance_sampling_mode": st.sampled_from(
            ["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
        ),
        "vllm_importance_sampling_clip_min": maybe(st.sampled_from([0.5, 3.0, 5.0])),
        "vllm_importance_sampling_clip_max": maybe(st.sampled_from([2.0, 3.0])),
        "vllm_importance_sampling_cap": maybe(st.sampled_from([1.0, 4.0])),
        "lr_scheduler_type": st.sampled_from(["linear", "cosine", "constant", "reduce_lr_on_plateau", "greedy"]),
        "load_best_model_at_end": st.booleans(),
        "save_strategy": st.sampled_from(["no", "steps", "epoch"]),
        "save_steps": st.sampled_from([100, 150, 500]),
        "eval_steps": maybe(st.sampled_from([50, 100, 0.25])),
        "logging_strategy": st.sampled_from(["no", "steps", "epoch"]),
        "logging_steps": st.sampled_from([0, 1, 10, 2.5, 0.1]),
        "dataloader_num_workers": st.sampled_from([0, 2]),
        "dataloader_prefetch_factor": maybe(st.just(2)),
        "scale_rewards": st.sampled_from(["group", "batch", "none", True, False]),
    },
)


@settings(max_examples=400, deadline=None)
@given(values=CONFIGS, world_size=st.integers(1, 16))
def test_accept_reject_matches_trl(values, world_size):
    built = build_grpo_config(values, world_size)
    trl_error = built if isinstance(built, Exception) else None
    event("TRL rejects" if trl_error else "TRL accepts")
    ours = check_mapping({**values, "use_cpu": True}, world_size=world_size)
    errors = [f"{d.code} {d.message}" for d in ours.diagnostics if d.severity == "error"]
    assert bool(errors) == bool(trl_error), f"TRL: {trl_error}\nours: {errors}\nconfig: {values} @ {world_size}"


@pytest.mark.parametrize("world_size", [1, 2, 3, 7, 8, 16])
def test_derived_batch_geometry_matches_trl(world_size):
    values = {"per_device_train_batch_size": 4, "num_generations": 4, "gradient_accumulation_steps": 3}
    built = build_grpo_config(values, world_size)
    plan = check_mapping(values, world_size=world_size).plan
    assert (plan.generation_batch_size, plan.steps_per_generation) == (
        built.generation_batch_size,
        built.steps_per_generation,
    )
