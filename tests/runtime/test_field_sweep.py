"""Every field of the config, set on a tiny demo run, does what docs/runtime-fields.md says:

* honoured: the run changes (metrics, weights, the files written) against the same run without the field, or,
  for a field whose effect a one-process CPU run cannot show (DDP options, log levels of other processes), the
  object it configures changes;
* refused: `grpo train` exits 3 with the field's coded message before the model is loaded (the validator refuses
  two of them itself: exit 1);
* warned: `grpo train --dry-run` prints the field's warning and exits 0;
* ignored: nothing is said about it.

Runs are in-process, 2 optimizer steps of the tiny model; base runs are shared between fields with the same
context. The whole module took 4 min 46 s on the 2-core development machine while it was heavily shared (load
average ~18); most of that is the ~140 short runs."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest
import torch
import yaml

import grpo_runtime.model.loading
import grpo_runtime.recipe.logs
import grpo_runtime.recipe.start
import grpo_runtime.setup  # imported before any test patches model.load_policy, so it binds the real one
import grpo_runtime.train
from grpo_runtime.distributed.accelerate import LAUNCH_FLAGS
from grpo_runtime.launch.demo import demo_rows
from grpo_runtime.support.fields import CONFIG_FIELDS, LAUNCH_FIELDS
from tests.support.tiny import save_tiny_model

from .helpers import validated, write_prompts

pytestmark = pytest.mark.slow
REWARD = "tests.runtime.test_field_sweep.token_reward"
FIRST = "tests.runtime.test_field_sweep.first_token_reward"


def token_reward(completion_ids, **kwargs):
    """Varies within every group from the first step (the demo's own reward is 0 on most random completions, which
    would leave nothing to learn and hide what a loss setting changes)."""
    return [float(sum(ids) % 7) for ids in completion_ids]


def first_token_reward(completion_ids, **kwargs):
    return [float(ids[0] % 3) if ids else 0.0 for ids in completion_ids]


def sigterm_once(completions, **kwargs):
    """A reward that sends this process SIGTERM on its first call (the pre-emption enable_jit_checkpoint saves)."""
    if not getattr(sigterm_once, "sent", False) and signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        sigterm_once.sent = True
        os.kill(os.getpid(), signal.SIGTERM)
    return [0.0] * len(completions)


@dataclass
class Case:
    """The field's value (plus `context`, also set on the base run it is compared with) and how to see it."""

    value: Any
    context: dict = field(default_factory=dict)
    probe: Callable | None = None  # (config) -> anything; compared with the base run's; default: run and compare
    calls: str | None = None  # "module.function": record its arguments during the run and compare those


EVAL = dict(eval_strategy="steps", eval_steps=1, per_device_eval_batch_size=4, num_generations_eval=2)
ITER2 = dict(num_iterations=2)
KL = dict(beta=0.04, num_iterations=2)
PEFT = dict(use_peft=True, lora_target_modules=["q_proj", "v_proj"])
SAVE = dict(save_strategy="steps", save_steps=1)
ADAPTIVE = dict(use_adaptive_entropy=True, entropy_coef=0.05, entropy_target=10.0)
TWO_REWARDS = dict(reward_funcs=[REWARD, FIRST])


def accelerator_probe(config):
    from grpo_runtime.setup import accelerator_options

    options = accelerator_options(config)
    return [repr(vars(h)) for h in options["kwargs_handlers"]] + [
        repr(vars(options["dataloader_config"])),
        repr(options["gradient_accumulation_plugin"]),
    ]


def log_level_probe(main: bool, local_main: bool):
    def probe(config):
        import transformers

        before = transformers.utils.logging.get_verbosity()
        try:
            fake = SimpleNamespace(is_main_process=main, is_local_main_process=local_main)
            grpo_runtime.recipe.start.set_log_levels(config, fake)
            return transformers.utils.logging.get_verbosity()
        finally:
            transformers.utils.logging.set_verbosity(before)

    return probe


def nan_filter_probe(config):
    from grpo_runtime.outputs.checkpoint import Progress

    return repr(
        grpo_runtime.recipe.logs.logged_loss(config, Progress(loss_since_log=1.0, steps_since_log=1), float("nan"))
    )


def router_probe(config):
    text = SimpleNamespace(output_router_logits=False, router_aux_loss_coef=0.02)
    moe = SimpleNamespace(config=SimpleNamespace(get_text_config=lambda: text))
    return grpo_runtime.model.loading.router_loss_coefficient(config, moe)


def kwargs_probe(key):
    return lambda config: grpo_runtime.model.loading.load_kwargs(config)[key]


def dataset_config_probe(config):
    """The config name reaches datasets.load_dataset (a folder of JSON files has no named configs to load)."""
    import datasets

    from grpo_runtime.data.datasets import load_split

    seen, original = [], datasets.load_dataset
    datasets.load_dataset = lambda *args, **kwargs: seen.append(kwargs.get("name")) or original(*args, **kwargs)
    try:
        load_split(config, "train")
    finally:
        datasets.load_dataset = original
    return seen


def determinism_probe(config):
    from grpo_runtime.setup import seed_everything

    saved = dict(os.environ)
    try:
        seed_everything(config, 0)
        return torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(False)
        os.environ.clear()
        os.environ.update(saved)


def backend_probe(config):
    from grpo_runtime.generation.backends import backend_name

    return backend_name(config)


def quantisation_probe(config):
    from grpo_runtime.model.loading import quantization_config

    found = quantization_config(config)
    return None if found is None else repr(found.to_dict())


def continuous_settings_probe(config):
    from grpo_runtime.generation.continuous import continuous_batching_settings

    return continuous_batching_settings(config)


HONOURED: dict[str, Case] = {
    "accelerator_config": Case(
        {"even_batches": False, "gradient_accumulation_kwargs": {"sync_each_batch": True}}, probe=accelerator_probe
    ),
    "activation_checkpointing": Case(True, calls="grpo_runtime.model.loading.enable_checkpointing"),
    "activation_checkpointing_kwargs": Case(
        {"use_reentrant": True},
        dict(activation_checkpointing=True),
        calls="grpo_runtime.model.loading.enable_checkpointing",
    ),
    "adam_beta1": Case(0.5),
    "adam_beta2": Case(0.9),
    "adam_epsilon": Case(0.1),
    "attn_implementation": Case("eager"),
    "beta": Case(0.04),
    "bf16": Case(True),
    "cache_implementation": Case("static", calls="grpo_runtime.generation.rollout.sample_completions"),
    "cast_lm_head_to_fp32": Case(True, dict(dtype="bfloat16")),
    "chat_template_kwargs": Case({"enable_thinking": False}, calls="grpo_runtime.training.batch.tokenize_prompts"),
    "dataloader_drop_last": Case(True, dict(EVAL)),
    "dataset_config": Case("default", dict(dataset_name="@json_data"), probe=dataset_config_probe),
    "dataset_name": Case("@other_data"),
    "dataset_test_split": Case("train", dict(EVAL)),
    "dataset_train_split": Case("test"),
    "datasets": Case([{"path": "json", "data_files": "@other_file", "split": "train"}], dict(dataset_name="@data")),
    "ddp_backend": Case("gloo", probe=accelerator_probe),
    "ddp_broadcast_buffers": Case(False, probe=accelerator_probe),
    "ddp_bucket_cap_mb": Case(10, probe=accelerator_probe),
    "ddp_find_unused_parameters": Case(False, probe=accelerator_probe),
    "ddp_static_graph": Case(True, probe=accelerator_probe),
    "ddp_timeout": Case(7200, probe=accelerator_probe),
    "delta": Case(1.0001, dict(ITER2)),
    "disable_dropout": Case(True, calls="grpo_runtime.model.loading.disable_dropout"),
    "disable_tqdm": Case(False, calls="tqdm.auto.tqdm"),
    "dtype": Case("bfloat16"),
    "enable_jit_checkpoint": Case(
        True, dict(max_steps=3, reward_funcs=["tests.runtime.test_field_sweep.sigterm_once"])
    ),
    "entropy_coef": Case(0.1),
    "entropy_coef_delta": Case(0.02, dict(ADAPTIVE)),
    "entropy_coef_max": Case(0.052, dict(ADAPTIVE)),
    "entropy_coef_min": Case(0.049, dict(ADAPTIVE, entropy_target=0.0)),
    "entropy_target": Case(0.0, dict(ADAPTIVE)),
    "epsilon": Case(0.001, dict(ITER2)),
    "epsilon_high": Case(0.002, dict(ITER2, epsilon=0.0005)),
    "eval_delay": Case(2, dict(EVAL)),
    "eval_on_start": Case(True, dict(EVAL)),
    "eval_steps": Case(2, dict(EVAL)),
    "eval_strategy": Case("steps", dict(per_device_eval_batch_size=4, num_generations_eval=2)),
    "fp16": Case(True, calls="accelerate.Accelerator"),
    "full_determinism": Case(True, probe=determinism_probe),
    "generation_batch_size": Case(8),
    "generation_kwargs": Case({"top_k": 3}),
    "gradient_accumulation_steps": Case(2),
    "gradient_checkpointing": Case(
        False, dict(activation_checkpointing=None), calls="grpo_runtime.model.loading.enable_checkpointing"
    ),
    "gradient_checkpointing_kwargs": Case(
        {"use_reentrant": True},
        dict(activation_checkpointing=True),
        calls="grpo_runtime.model.loading.enable_checkpointing",
    ),
    "importance_sampling_level": Case("sequence", dict(ITER2)),
    "learning_rate": Case(0.01),
    "log_completions": Case(True),
    "log_level": Case("debug", probe=log_level_probe(True, True)),
    "log_level_replica": Case("debug", probe=log_level_probe(False, False)),
    "log_on_each_node": Case(False, dict(log_level="debug"), probe=log_level_probe(False, True)),
    "logging_first_step": Case(True, dict(logging_steps=2)),
    "logging_nan_inf_filter": Case(False, probe=nan_filter_probe),
    "logging_steps": Case(2),
    "logging_strategy": Case("epoch"),
    "lora_alpha": Case(8, dict(PEFT)),
    "lora_dropout": Case(0.3, dict(PEFT)),
    "lora_modules_to_save": Case(["lm_head"], dict(PEFT)),
    "lora_r": Case(4, dict(PEFT)),
    "lora_target_modules": Case(["k_proj"], dict(PEFT)),
    "lora_target_parameters": Case(["mlp.down_proj.weight"], dict(PEFT, lora_dropout=0.0)),
    "lora_task_type": Case("SEQ_2_SEQ_LM", dict(PEFT), calls="peft.LoraConfig"),
    "loss_type": Case("grpo"),
    "lr_scheduler_kwargs": Case({"power": 3.0}, dict(lr_scheduler_type="polynomial", max_steps=3)),
    "lr_scheduler_type": Case("constant"),
    "mask_truncated_completions": Case(True),
    "max_completion_length": Case(4),
    "max_grad_norm": Case(0.01),
    "max_steps": Case(3),
    "min_p": Case(0.3),
    "model_init_kwargs": Case({"dtype": "bfloat16"}),
    "model_name_or_path": Case("@other_model"),
    "model_revision": Case("v2", probe=kwargs_probe("revision")),
    "multi_objective_aggregation": Case("normalize_then_sum", dict(TWO_REWARDS)),
    "neftune_noise_alpha": Case(5.0),
    "num_generations": Case(4),
    "num_generations_eval": Case(4, dict(EVAL)),
    "num_iterations": Case(2),
    "num_train_epochs": Case(0.125, dict(max_steps=-1, num_train_epochs=0.25)),
    "off_policy_mask_threshold": Case(1e-6, dict(ITER2)),
    "optim": Case("sgd"),
    "optim_args": Case("momentum=0.9", dict(optim="sgd")),
    "output_dir": Case("@other_output"),
    "pad_to_multiple_of": Case(16),
    "per_device_eval_batch_size": Case(2, dict(EVAL)),
    "per_device_train_batch_size": Case(8),
    "project": Case("elsewhere", calls="grpo_runtime.recipe.start.open_sinks"),
    "ref_model_mixup_alpha": Case(0.9, dict(beta=0.04, sync_ref_model=True, ref_model_sync_steps=1)),
    "ref_model_sync_steps": Case(1, dict(beta=0.04, sync_ref_model=True)),
    "remove_unused_columns": Case(True, calls="grpo_runtime.training.batch.reward_columns"),
    "repetition_penalty": Case(20.0, dict(temperature=0.02)),  # the random model's logits are nearly flat
    "report_to": Case("tensorboard"),
    "resume_from_checkpoint": Case("@checkpoint", dict(max_steps=2)),
    "reward_funcs": Case([FIRST]),
    "reward_model_name_or_path": Case("@model"),
    "reward_weights": Case([1.0, 0.5], dict(TWO_REWARDS)),
    "router_aux_loss_coef": Case(0.5, probe=router_probe),
    "run_name": Case("named", calls="grpo_runtime.recipe.start.open_sinks"),
    "sapo_temperature_neg": Case(3.0, dict(ITER2, loss_type="sapo")),
    "sapo_temperature_pos": Case(3.0, dict(ITER2, loss_type="sapo")),
    "save_only_model": Case(True, dict(SAVE)),
    "save_steps": Case(1, dict(save_strategy="steps")),
    "save_strategy": Case("steps"),
    # the best checkpoint: num_tokens only grows, so "lower is better" makes step 1 the best of the two
    "metric_for_best_model": Case("eval_loss", dict(EVAL, **SAVE, save_total_limit=1)),
    "greater_is_better": Case(True, dict(EVAL, **SAVE, metric_for_best_model="num_tokens")),
    "load_best_model_at_end": Case(
        True, dict(EVAL, **SAVE, metric_for_best_model="num_tokens", greater_is_better=False)
    ),
    "save_total_limit": Case(1, dict(SAVE)),
    "scale_rewards": Case("none"),
    "seed": Case(4),
    "shuffle_dataset": Case(False),
    "steps_per_generation": Case(2),
    "sync_ref_model": Case(True, dict(beta=0.04, ref_model_sync_steps=1)),
    "temperature": Case(0.7),
    "test_split_size": Case(
        0.5,
        dict(
            EVAL,
            dataset_name=None,
            test_split_size=0.25,
            datasets=[{"path": "json", "data_files": "@train_file", "split": "train"}],
        ),
    ),
    "top_entropy_quantile": Case(0.5),
    "top_k": Case(3),
    "top_p": Case(0.5),
    "trust_remote_code": Case(True, probe=kwargs_probe("trust_remote_code")),
    "use_adaptive_entropy": Case(True, dict(entropy_coef=0.05, entropy_target=10.0)),
    "use_bias_correction_kl": Case(False, dict(KL)),
    "use_cache": Case(True),
    "use_cpu": Case(False, calls="accelerate.Accelerator"),
    "use_dora": Case(True, dict(PEFT)),
    "use_rslora": Case(True, dict(PEFT)),
    "vespo_k_neg": Case(1.0, dict(ITER2, loss_type="vespo")),
    "vespo_k_pos": Case(1.0, dict(ITER2, loss_type="vespo")),
    "vespo_lambda_neg": Case(1.0, dict(ITER2, loss_type="vespo")),
    "vespo_lambda_pos": Case(1.0, dict(ITER2, loss_type="vespo")),
    "warmup_steps": Case(1),
    "weight_decay": Case(0.5),
    "tf32": Case(True),  # CUDA only: on this CPU run the table warns (checked below), nothing else changes
    # Sharding needs several processes (tests/runtime/test_sharded_launch.py runs them); here, the plugin settings
    # each field produces. The Hub fields: what the pusher would do (test_hub_push.py uploads to a local server).
    "deepspeed": Case({"zero_optimization": {"stage": 2}}, probe=lambda c: distributed_probe(c)),
    "fsdp": Case("full_shard", dict(num_processes=2), probe=lambda c: distributed_probe(c)),
    "fsdp_config": Case(
        {"reshard_after_forward": False}, dict(fsdp="full_shard", num_processes=2), probe=lambda c: distributed_probe(c)
    ),
    "push_to_hub": Case(True, probe=lambda c: hub_probe(c)),
    "transformers_continuous_batching_config": Case(
        {"max_memory_percent": 0.3, "use_cuda_graph": False},
        dict(use_transformers_continuous_batching=True),
        probe=continuous_settings_probe,
    ),
    "use_transformers_continuous_batching": Case(True),  # trains on generate_batch's completions
    "use_transformers_paged": Case(True, probe=backend_probe),
    "load_in_4bit": Case(True, dict(PEFT), probe=quantisation_probe),
    "load_in_8bit": Case(True, dict(PEFT), probe=quantisation_probe),
    "bnb_4bit_quant_type": Case("fp4", dict(PEFT, load_in_4bit=True), probe=quantisation_probe),
    "bnb_4bit_quant_storage": Case("bfloat16", dict(PEFT, load_in_4bit=True), probe=quantisation_probe),
    "use_bnb_nested_quant": Case(True, dict(PEFT, load_in_4bit=True), probe=quantisation_probe),
    "hub_always_push": Case(True, dict(push_to_hub=True), probe=lambda c: hub_probe(c)),
    "hub_model_id": Case("me/model", dict(push_to_hub=True), probe=lambda c: hub_probe(c)),
    "hub_private_repo": Case(True, dict(push_to_hub=True), probe=lambda c: hub_probe(c)),
    "hub_revision": Case("dev", dict(push_to_hub=True), probe=lambda c: hub_probe(c)),
    "hub_strategy": Case("all_checkpoints", dict(push_to_hub=True), probe=lambda c: hub_probe(c)),
}
# Refused fields: the value to set, and its context. The validator itself refuses two (exit 1).
REFUSED: dict[str, tuple[Any, dict]] = {
    "auto_find_batch_size": (True, {}),
    "parallelism_config": ({"dp_shard_size": 1}, {}),
    "dataset_streaming": (True, {}),
    "debug": ("underflow_overflow", {}),
    "hub_token": ("hf_secret", {}),
    "log_completions_hub_repo": ("me/completions", dict(log_completions=True)),
    "streaming": (True, {}),
}
REFUSED_BY_VALIDATOR = {"auto_find_batch_size", "parallelism_config"}
WARNED: dict[str, tuple[Any, dict]] = {
    "dataloader_multiprocessing_context": ("spawn", dict(dataloader_num_workers=1)),
    "dataloader_num_workers": (2, {}),
    "dataloader_persistent_workers": (True, dict(dataloader_num_workers=1)),
    "dataloader_prefetch_factor": (4, dict(dataloader_num_workers=1)),
    "ignore_data_skip": (True, {}),
    "log_unique_prompts": (True, dict(log_completions=True)),
    "num_completions_to_print": (2, dict(log_completions=True)),
    "save_on_each_node": (True, {}),
    "skip_memory_metrics": (False, {}),
    "torch_compile": (True, {}),
    "torch_empty_cache_steps": (2, {}),
    "use_liger_kernel": (True, {}),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_model_dir):
    """Model, data and output folders shared by the module (the model: the run's tiny one)."""
    import datasets

    root = tmp_path_factory.mktemp("sweep")
    data = write_prompts(root / "data" / "train.jsonl").parent
    write_prompts(data / "test.jsonl", demo_rows(repeats=1)[:5])
    other = write_prompts(root / "other" / "train.jsonl", list(reversed(demo_rows(repeats=2))))
    # the runs read folders written by save_to_disk: loading JSON files again costs a quarter of a run
    splits = datasets.load_dataset(
        "json", data_files={"train": str(data / "train.jsonl"), "test": str(data / "test.jsonl")}
    )
    splits.save_to_disk(str(root / "saved"))
    datasets.load_dataset("json", data_files=str(other), split="train").save_to_disk(str(root / "saved_other"))
    paths = {
        "@model": str(tiny_model_dir),
        "@other_model": str(save_tiny_model(root / "model2", seed=1)),
        "@data": str(root / "saved"),
        "@json_data": str(data),
        "@train_file": str(data / "train.jsonl"),
        "@other_data": str(root / "saved_other"),
        "@other_file": str(other),
        "@other_output": str(root / "elsewhere"),
    }
    return SimpleNamespace(root=root, paths=paths, bases={}, counter=[0])


def settings_for(world, **extra) -> dict:
    world.counter[0] += 1
    settings = dict(
        model_name_or_path="@model",
        dataset_name="@data",
        output_dir=str(world.root / f"run{world.counter[0]}"),
        reward_funcs=[REWARD],
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=3,
        learning_rate=0.05,
        optim="adamw_torch",
        max_steps=2,
        logging_steps=1,
        save_strategy="no",
        seed=3,
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        report_to="none",
        disable_tqdm=True,
    )
    settings.update(extra)
    return {k: resolve(world, v) for k, v in settings.items() if v is not None}


def resolve(world, value):
    if isinstance(value, str) and value.startswith("@") and value in world.paths:
        return world.paths[value]
    if isinstance(value, list):
        return [resolve(world, v) for v in value]
    if isinstance(value, dict):
        return {k: resolve(world, v) for k, v in value.items()}
    return value


def fingerprint(output: Path) -> dict:
    """What a run changed: its metrics (without timings), every file it wrote and the bytes of the weights and
    model config. grpo_config.yaml is left out: it records every setting, so it always differs."""
    metrics = []
    if (output / "metrics.jsonl").exists():
        for line in (output / "metrics.jsonl").read_text().splitlines():
            metrics.append({k: v for k, v in json.loads(line).items() if "time" not in k})
    files = sorted(
        str(p.relative_to(output).parent / "events") if p.name.startswith("events.out") else str(p.relative_to(output))
        for p in output.rglob("*")
        if p.is_file()
    )
    digests = {
        str(p.relative_to(output)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in output.rglob("*")
        if p.suffix in (".safetensors", ".json", ".jsonl")
        and p.name not in ("metrics.jsonl",)
        and "prompt_assignment" not in str(p)
    }
    return {"metrics": metrics, "files": files, "digests": digests}


def distributed_probe(config):
    from grpo_runtime.distributed import accelerate as distributed

    return repr((distributed.zero_stage(config), distributed.fsdp_plugin_kwargs(config) if config.fsdp else None))


def hub_probe(config):
    from grpo_runtime.outputs.hub import HubPusher

    pusher = HubPusher(config, Path("out"), main_process=True)
    return repr((pusher.enabled, pusher.repo_id, pusher.strategy, pusher.private, pusher.revision, pusher.always_push))


def observe(world, monkeypatch, settings: dict, case: Case):
    """Run (or probe) one config; returns what the comparison looks at."""
    result = validated(settings, world_size=settings.get("num_processes") or 1)
    if case.probe is not None:
        return case.probe(result.config)
    recorded = []
    if case.calls is not None:
        module_name, _, name = case.calls.rpartition(".")
        import importlib

        module = importlib.import_module(module_name)
        original = getattr(module, name)

        def recording(*args, **kwargs):
            recorded.append(
                repr((args[1:] if name == "sample_completions" else args, sorted(kwargs.items())))
                if name != "tokenize_prompts"
                else repr(args[2])
            )
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, recording)
        if name == "Accelerator":
            monkeypatch.setattr("accelerate.Accelerator", recording)
    grpo_runtime.train.main(result.config, result.plan)
    monkeypatch.undo()
    output = Path(settings["output_dir"])
    return recorded if case.calls is not None else fingerprint(output)


def base_observation(world, monkeypatch, case: Case):
    key = json.dumps([case.context, id(case.probe) if case.probe else None, case.calls], sort_keys=True, default=str)
    if key not in world.bases:
        world.bases[key] = observe(world, monkeypatch, settings_for(world, **case.context), case)
    return world.bases[key]


def with_field(world, case: Case, name: str) -> dict:
    return settings_for(world, **{**case.context, name: case.value})


@pytest.mark.parametrize("name", sorted(HONOURED))
def test_an_honoured_field_changes_the_run(world, monkeypatch, name):
    case = HONOURED[name]
    assert CONFIG_FIELDS[name].category == "honoured"
    if name == "tf32":
        settings = settings_for(world, tf32=True)
        from grpo_runtime.support import assess

        assert [d.code for d in assess(validated(settings))] == ["GRPO-U007"]
        return
    if name == "resume_from_checkpoint":
        first = settings_for(world, **case.context, **SAVE)
        observe(world, monkeypatch, first, Case(None))
        resumed = settings_for(world, **case.context, resume_from_checkpoint=first["output_dir"] + "/checkpoint-1")
        seen = observe(world, monkeypatch, resumed, Case(None))
        assert [m["step"] for m in seen["metrics"]] == [2]  # continued after step 1
        return
    if name == "enable_jit_checkpoint":  # SIGTERM during step 1: checkpoint-1 saved and the run stopped there
        # (no base run: without the field, SIGTERM would end the test process, as it ends an unprotected run)
        changed = observe(world, monkeypatch, with_field(world, case, name), case)
        assert [m["step"] for m in changed["metrics"]] == [1] and "checkpoint-1/runtime_state.json" in changed["files"]
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the previous handler is back
        return
    base = base_observation(world, monkeypatch, case)
    changed = observe(world, monkeypatch, with_field(world, case, name), case)
    if name == "output_dir":
        assert (Path(world.paths["@other_output"]) / "metrics.jsonl").exists()
        return
    assert changed != base, f"{name}: {case.value!r} changed nothing"


REFUSAL_LIMITS = [
    (name, i)
    for name, entry in {**CONFIG_FIELDS, **LAUNCH_FIELDS}.items()
    for i, limit in enumerate(entry.limits)
    if limit.refuse and entry.category == "honoured"
]
HONOURED_REFUSALS = {  # a value each honoured field refuses, and its context
    "use_vllm": [(True, {})],  # refused where the vllm package is missing, as in this environment
    "deepspeed": [("missing/zero3.json", {})],
    "accelerator_config": [
        ({"split_batches": True}, dict(num_processes=2)),
        ({"gradient_accumulation_kwargs": {"num_steps": 2}}, {}),
    ],
    "lr_scheduler_type": [("reduce_lr_on_plateau", dict(eval_strategy="steps"))],
    "optim": [("galore_adamw", {})],  # (the bitsandbytes ones are refused only without bitsandbytes)
    "optim_args": [("momentum=0.9", dict(optim="adamw_torch"))],
    "use_peft": [],  # refused only without the peft package, which the test environment has
    "num_processes": [(2, {})],
    "model_name_or_path": [(None, {})],  # GRPOConfig arguments for a script: no model to train
    "transformers_continuous_batching_config": [
        ({"max_memory_fraction": 0.4}, dict(use_transformers_continuous_batching=True))
    ],
    "use_transformers_continuous_batching": [(True, dict(fsdp="full_shard", num_processes=2))],
    "load_in_4bit": [(True, dict(PEFT, fsdp="full_shard", num_processes=2))],  # (bitsandbytes is installed here)
    "load_in_8bit": [(True, dict(PEFT, fsdp="full_shard", num_processes=2))],
}


@pytest.fixture
def no_loading(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("grpo_runtime.setup.load_policy", refuse)


def train_file(world, **settings) -> str:
    path = world.root / f"config{world.counter[0]}.yaml"
    path.write_text(yaml.safe_dump(settings_for(world, **settings)))
    return str(path)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_field_exits_3_before_loading(world, no_loading, capsys, name):
    from grpo_runtime.launch.cli import launch_command, train_command

    value, context = REFUSED[name]
    assert CONFIG_FIELDS[name].category == "refused"
    path = train_file(world, **{**context, name: value})
    code = launch_command([path, "--num-processes", "2", "--dry-run"]) if name == "fsdp" else train_command([path])
    captured = capsys.readouterr()
    if name in REFUSED_BY_VALIDATOR:
        assert code == 1 and "error[GRPO-" in captured.err
        return
    assert code == 3, captured.err
    assert f"] {name}: " in captured.err and "error[GRPO-U" in captured.err and "Traceback" not in captured.err


@pytest.mark.parametrize("name", sorted(HONOURED_REFUSALS))
def test_an_honoured_fields_refused_values_exit_3_before_loading(world, no_loading, capsys, name):
    from grpo_runtime.launch.cli import train_command

    assert {n for n, _ in REFUSAL_LIMITS} == set(HONOURED_REFUSALS)
    for value, context in HONOURED_REFUSALS[name]:
        launch = {"num_processes": value} if name == "num_processes" else {}
        settings = {**context, **launch} if launch else {**context, name: value}
        assert train_command([train_file(world, **settings)]) == 3, (name, value)
        err = capsys.readouterr().err
        assert f"] {name}: " in err and "error[GRPO-U" in err, err


@pytest.mark.parametrize("name", sorted(WARNED))
def test_a_warned_field_warns_and_runs(world, no_loading, capsys, name):
    from grpo_runtime.launch.cli import train_command

    value, context = WARNED[name]
    assert CONFIG_FIELDS[name].category == "warned"
    assert train_command([train_file(world, **{**context, name: value}), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"] {name}: " in out and "warning[GRPO-U" in out and "can run" in out


def test_ignored_fields_are_ignored_as_trl_ignores_them(world):
    from grpo_runtime.support import assess
    from grpo_schema.engine.compiled import compiled

    facts = compiled("config").fields
    ignored = sorted(name for name, entry in CONFIG_FIELDS.items() if entry.category == "ignored")
    assert len(ignored) >= 30  # a floor against an empty sweep (fields move to honoured as the runtime grows)
    set_any = {}
    for name in ignored:
        fact, default = facts[name], facts[name]["default"]
        choices = [c for c in fact.get("choices") or [] if c != default]
        value = (
            choices[0]
            if choices
            else not default
            if isinstance(default, bool)
            else default + 1
            if isinstance(default, (int, float))
            else {"x": 1}
            if "mapping" in fact["expected"]
            else ["x"]
            if "list" in fact["expected"] and "string" not in fact["expected"]
            else "x"
        )
        set_any[name] = value
    result = validated({k: v for k, v in settings_for(world).items()})
    for name, value in set_any.items():
        checked = validated_or_none({**settings_for(world), name: value})
        if checked is not None:
            assert [d.code for d in assess(checked)] == [], name
    assert result.valid


def validated_or_none(settings):
    from grpo_schema import check_text

    result = check_text(yaml.safe_dump(settings))
    return result if result.valid else None


def test_every_honoured_launch_key_reaches_accelerate_launch():
    from grpo_runtime.distributed.accelerate import SHARDING_LAUNCH_KEYS
    from grpo_runtime.launch.cli import launch_arguments

    for name, entry in LAUNCH_FIELDS.items():
        if entry.category != "honoured" or name == "num_processes" or name in SHARDING_LAUNCH_KEYS:
            continue  # the sharding keys become accelerate's own flags: test_distributed_config.py
        value = True if name in LAUNCH_FLAGS else "7"
        flags = launch_arguments({name: value}, [])
        assert f"--{name}" in flags, name
        assert launch_arguments({name: value}, [f"--{name.replace('_', '-')}", "8"]) == []  # the command line wins


@pytest.mark.parametrize("name,value", [("use_megatron_lm", True)])
def test_a_refused_launch_key_exits_3_before_loading(world, no_loading, capsys, name, value):
    from grpo_runtime.launch.cli import launch_command

    assert LAUNCH_FIELDS[name].category == "refused"
    assert launch_command([train_file(world, **{name: value})]) == 3
    err = capsys.readouterr().err
    assert f"error[GRPO-U002] {name}: " in err and "Traceback" not in err


def test_a_missing_accelerate_config_exits_3_before_loading(world, no_loading, capsys):
    from grpo_runtime.launch.cli import launch_command

    assert launch_command([train_file(world, config_file="missing-accelerate.yaml")]) == 3
    err = capsys.readouterr().err
    assert "error[GRPO-U002]" in err and "missing-accelerate.yaml" in err and "Traceback" not in err
