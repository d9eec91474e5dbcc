"""Model states under ZeRO-2/3 agree with DeepSpeed's own estimator: its functions when deepspeed imports, else
the formulas its documentation publishes (the same ones the functions implement)."""

import pytest

from grpo_schema.engine.hardware.catalogue import MODELS
from grpo_schema.engine.hardware.memory import Setup
from grpo_schema.engine.hardware.states_memory import model_states


def _deepspeed():
    try:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
    except ImportError:
        return None
    return estimate_zero2_model_states_mem_needs, estimate_zero3_model_states_mem_needs


def published_zero2(params, gpus, offload):
    return 2 * params if offload else 2 * params + int(18 * params / gpus)  # DeepSpeed 0.19.8's formula


def published_zero3(params, largest, gpus, offload, offload_params):
    largest_layer_memory = 4 * largest
    if offload:
        return largest_layer_memory if offload_params else largest_layer_memory + int(2 * params / gpus)
    return largest_layer_memory + int(18 * params / gpus)


def _setup(stage, gpus, offload=False, offload_params=False):
    return Setup(
        world_size=gpus,
        micro_batch=1,
        prompt_length=1,
        completion_length=1,
        generation_rows=1,
        weight_bytes=2,
        compute_bytes=2,
        strategy=f"zero{stage}",
        optim="adamw_torch",
        offload_optimizer=offload,
        offload_params=offload_params,
    )


CASES = [
    (name, gpus, offload)
    for name in ("qwen2.5-0.5b", "qwen2.5-7b", "llama-3.1-70b")
    for gpus in (1, 8, 16)
    for offload in (False, True)
]


@pytest.mark.parametrize("name, gpus, offload", CASES)
def test_zero2_model_states(name, gpus, offload):
    model = MODELS[name]
    ours = sum(model_states(model, _setup(2, gpus, offload))[:3])
    functions = _deepspeed()
    if functions is not None:
        _, expected = functions[0](model.total_params(), num_gpus_per_node=gpus, num_nodes=1, cpu_offload=offload)
    else:
        expected = published_zero2(model.total_params(), gpus, offload)
    assert ours == pytest.approx(expected, rel=1e-6, abs=16)


# DeepSpeed offloads parameters only together with the optimizer.
ZERO3_CASES = [
    (*case, offload_params) for case in CASES for offload_params in (False, True) if case[2] or not offload_params
]


@pytest.mark.parametrize("name, gpus, offload, offload_params", ZERO3_CASES)
def test_zero3_model_states(name, gpus, offload, offload_params):
    model = MODELS[name]
    ours = sum(model_states(model, _setup(3, gpus, offload, offload_params))[:3])
    functions = _deepspeed()
    args = (model.total_params(), model.largest_layer_params())
    if functions is not None:
        _, expected, _ = functions[1](
            *args,
            num_gpus_per_node=gpus,
            num_nodes=1,
            cpu_offload=offload,
            cpu_offload_params=offload_params,
            zero_init=True,
        )
    else:
        expected = published_zero3(*args, gpus, offload, offload_params)
    assert ours == pytest.approx(expected, rel=1e-6, abs=16)
