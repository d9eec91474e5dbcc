"""Generated verl override sets for the differential test, and how verl's own refusals map to the dialect's codes.

The sweep covers what the parse-time checks read (batch sizes, rollout.n, GPUs and nodes, FSDP and Megatron
parallel sizes, dynamic batch size, the deprecated global micro-batches, the reference's log-prob sizes, Ulysses,
validation sampling, the loss aggregation, the critic of gae) and a few key mistakes; seeded, so every run judges
the same cases.
"""

from __future__ import annotations

import random
import shlex
from typing import Any

A = "actor_rollout_ref.actor."
R = "actor_rollout_ref.rollout."
REF = "actor_rollout_ref.ref."

# Parse-time codes: the dialect says verl refuses before Ray starts exactly when one of these is an error.
PARSE_TIME = frozenset(
    {
        "GRPO-Q004",
        "GRPO-Q005",
        "GRPO-Q010",
        "GRPO-Q011",
        "GRPO-Q012",
        "GRPO-Q013",
        "GRPO-Q014",
        "GRPO-Q023",
        "GRPO-Q024",
        "GRPO-Q025",
        "GRPO-Q015",
        "GRPO-Q016",
        "GRPO-Q017",
        "GRPO-Q018",
        "GRPO-Q019",
        "GRPO-Q020",
        "GRPO-Q021",
    }
)

# verl's refusal (exception text, causes included) -> the code that says the same; first match wins.
REFUSALS = (
    ("Could not override", "GRPO-Q004"),
    ("Could not append", "GRPO-Q005"),
    ("Error parsing override", "GRPO-Q023"),
    ("LexerNoViableAltException", "GRPO-Q023"),
    ("mismatched input", "GRPO-Q023"),
    ("no viable alternative", "GRPO-Q023"),
    ("extraneous input", "GRPO-Q023"),
    ("Ambiguous value for argument", "GRPO-Q023"),
    ("Could not find 'model_engine/", "GRPO-Q024"),
    ("Missing mandatory value", "GRPO-Q025"),
    ("got an unexpected keyword argument", "GRPO-Q021"),
    ("must be divisible by model_parallel_size", "GRPO-Q010"),
    ("real_train_batch_size", "GRPO-Q011"),
    ("unsupported operand type(s) for *: 'int' and 'NoneType'", "GRPO-Q011"),
    ("Invalid loss_agg_mode", "GRPO-Q013"),
    ("[critic]", "GRPO-Q019"),
    ("critic.ppo", "GRPO-Q019"),
    ("must be >= actor.ppo_mini_batch_size", "GRPO-Q014"),
    ("must be >= n_gpus", "GRPO-Q015"),
    ("must be divisible by ppo_micro_batch_size", "GRPO-Q015"),
    ("use_remove_padding", "GRPO-Q016"),
    ("log_prob_micro_batch_size", "GRPO-Q017"),
    ("ppo_micro_batch_size", "GRPO-Q012"),
    ("validation gen temperature", "GRPO-Q018"),
    ("lora_rank", "GRPO-Q020"),
)
# Refusals that come from the oracle's environment rather than the config (verl imports vLLM to check a LoRA rank).
# A critic (gae) loads critic.model.path's config files first, which the oracle does not have.
ENVIRONMENT = ("vllm version None not supported", "Repo id must be in the form")


def code_of(message: str) -> str | None:
    return next((code for text, code in REFUSALS if text in message), None)


def _pick(rng: random.Random, *choices: Any) -> Any:
    return rng.choice(choices)


def one_case(rng: random.Random) -> dict[str, Any]:
    megatron = rng.random() < 0.25
    o: dict[str, Any] = {
        # grpo, and rloo: with gae verl builds the critic, whose model config loads critic.model.path's files, which
        # the oracle does not have (the critic's batch checks come after that load)
        "algorithm.adv_estimator": "rloo" if rng.random() < 0.1 else "grpo",
        "trainer.n_gpus_per_node": _pick(rng, 1, 2, 3, 4, 6, 8),
        "trainer.nnodes": _pick(rng, 1, 1, 1, 2, 3),
        "data.train_batch_size": _pick(rng, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 60, 64, 100, 128, 256, 500, 1024),
        R + "n": _pick(rng, 1, 2, 3, 4, 5, 8, 16),
        A + "ppo_mini_batch_size": _pick(rng, 1, 2, 4, 8, 16, 32, 64, 128, 256, 1024),
        A + "ppo_epochs": _pick(rng, 1, 1, 2, 3),
    }
    if rng.random() < 0.2:
        o[A + "use_dynamic_bsz"] = True
    micro = rng.random()
    if micro < 0.7:
        o[A + "ppo_micro_batch_size_per_gpu"] = _pick(rng, 1, 2, 4, 8, 16, 80)
    elif micro < 0.85:
        o[A + "ppo_micro_batch_size"] = _pick(rng, 1, 4, 8, 16, 64)
        if rng.random() < 0.3:
            o[A + "ppo_micro_batch_size_per_gpu"] = 4
    for prefix in (R, REF):
        which = rng.random()
        if which < 0.75:
            o[prefix + "log_prob_micro_batch_size_per_gpu"] = _pick(rng, 1, 4, 16, 160)
        elif which < 0.85:
            o[prefix + "log_prob_micro_batch_size"] = _pick(rng, 8, 64)
            if rng.random() < 0.4:
                o[prefix + "log_prob_micro_batch_size_per_gpu"] = 4
    o[A + "use_kl_loss"] = rng.random() < 0.6
    if megatron:
        o[A + "megatron.tensor_model_parallel_size"] = _pick(rng, 1, 2, 4)
        o[A + "megatron.pipeline_model_parallel_size"] = _pick(rng, 1, 2)
        o[A + "megatron.context_parallel_size"] = _pick(rng, 1, 1, 2)
    elif rng.random() < 0.15:
        o[A + "ulysses_sequence_parallel_size"] = 2
        o["actor_rollout_ref.model.use_remove_padding"] = rng.random() < 0.5
    if rng.random() < 0.1:
        o[R + "val_kwargs.do_sample"] = True
        o[R + "temperature"] = _pick(rng, 0, 0.7)
    if rng.random() < 0.06:
        o[A + "loss_agg_mode"] = _pick(rng, "seq-mean-token-mean", "sum", "token-sum")
    overrides = [f"{k}={_text(v)}" for k, v in o.items()]
    mistake = rng.random()
    if mistake < 0.05:
        overrides.append(A + "ppo_mini_batch_sise=4")
    elif mistake < 0.08:
        overrides.append("+data.train_batch_size=8")
    elif mistake < 0.10:
        overrides.append("+trainer.my_own_note=1")
    return {"overrides": overrides, "config_name": "ppo_megatron_trainer" if megatron else "ppo_trainer"}


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def generated(count: int = 320, seed: int = 20261207) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [one_case(rng) for _ in range(count)]


def as_script(case: dict[str, Any]) -> str:
    """The override set as the launch script a user writes (one override a line, continued, quoted for the shell
    where it needs to be, so that verl's command line gets each override as written)."""
    head = "python3 -m verl.trainer.main_ppo"
    if case["config_name"] != "ppo_trainer":
        head += f" --config-name {case['config_name']}"
    return " \\\n    ".join([head, *map(shlex.quote, case["overrides"])]) + "\n"


# Override sets in the patterns of real launch scripts that the generated sweep does not reach, each with the code
# grpo gives (None: valid): a model engine's own keys, config-class fields added with +, values Hydra's grammar
# refuses, a LoRA run without a rollout engine, a field the actor's policy-loss class lacks.
_PATTERN_BASE = [
    "algorithm.adv_estimator=grpo",
    "data.train_batch_size=64",
    R + "n=8",
    A + "ppo_mini_batch_size=16",
    A + "ppo_micro_batch_size_per_gpu=4",
    R + "log_prob_micro_batch_size_per_gpu=8",
    REF + "log_prob_micro_batch_size_per_gpu=8",
    "trainer.n_gpus_per_node=8",
    "trainer.nnodes=1",
]
PATTERNS: tuple[tuple[list[str], str | None], ...] = (
    (["model_engine=veomni", A + "veomni.param_offload=True", REF + "veomni.param_offload=True"], None),
    (["model_engine=torchtitan", A + "torchtitan.tensor_parallel_size=2"], None),
    ([A + "veomni.param_offload=True"], "GRPO-Q004"),
    (["model_engine=mindspeed"], "GRPO-Q024"),
    (["+" + A + "fsdp_config.mixed_precision.param_dtype=bf16"], None),
    ([A + "fsdp_config.mixed_precision=null"], "GRPO-Q004"),
    (["actor_rollout_ref.model.path=<path_to_model>"], "GRPO-Q023"),
    (["trainer.experiment_name=qwen3_4b}"], "GRPO-Q023"),
    (["trainer.logger=console,wandb"], "GRPO-Q023"),
    (["trainer.project_name=a=b"], "GRPO-Q023"),
    (["trainer.logger=['console','wandb']", "trainer.experiment_name='a,b (c)'"], None),
    (["actor_rollout_ref.model.lora_rank=32"], "GRPO-Q025"),
    (["actor_rollout_ref.model.lora_rank=32", "actor_rollout_ref.model.lora.merge=True"], None),
    (["+" + A + "policy_loss.tau_pos=1.0"], "GRPO-Q021"),
)


def patterns() -> list[tuple[dict[str, Any], str | None]]:
    return [({"overrides": _PATTERN_BASE + extra, "config_name": "ppo_trainer"}, code) for extra, code in PATTERNS]


def critic_cases(count: int = 24, seed: int = 20261208) -> list[dict[str, Any]]:
    """Override sets that train a critic (gae, or critic.enable), for GRPO-Q019 against verl's critic config class."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        o: dict[str, Any] = {
            "trainer.n_gpus_per_node": _pick(rng, 1, 2, 4, 8),
            "trainer.nnodes": _pick(rng, 1, 1, 2),
            "data.train_batch_size": _pick(rng, 8, 16, 32, 64),
            "critic.ppo_mini_batch_size": _pick(rng, 8, 16, 32, 64, 128),
        }
        if rng.random() < 0.3:
            o.update({"algorithm.adv_estimator": "grpo", "critic.enable": True})
        else:
            o["algorithm.adv_estimator"] = "gae"
        micro = rng.random()
        if micro < 0.45:
            o["critic.ppo_micro_batch_size_per_gpu"] = _pick(rng, 1, 2, 4)
        elif micro < 0.8:
            o["critic.ppo_micro_batch_size"] = _pick(rng, 2, 4, 6, 8, 16)
        elif micro < 0.9:
            o["critic.ppo_micro_batch_size"], o["critic.ppo_micro_batch_size_per_gpu"] = 8, 2
        if rng.random() < 0.15:
            o["critic.use_dynamic_bsz"] = True
        out.append({"overrides": [f"{k}={_text(v)}" for k, v in o.items()], "config_name": "ppo_trainer"})
    return out


def lora_cases() -> list[dict[str, Any]]:
    """LoRA settings for GRPO-Q020 and GRPO-Q025: which ones make validate_config ask vLLM for its LoRA ranks."""
    out = []
    for name in ("vllm", "sglang"):
        for rank in (0, 8):
            for old_rank in (0, 16):
                for merge in (False, True):
                    overrides = [
                        R + f"name={name}",
                        f"actor_rollout_ref.model.lora.rank={rank}",
                        f"actor_rollout_ref.model.lora_rank={old_rank}",
                        f"actor_rollout_ref.model.lora.merge={_text(merge)}",
                    ]
                    out.append({"overrides": _PATTERN_BASE + overrides, "config_name": "ppo_trainer"})
    return out


LORA_RANKS = (1, 8, 320, 512, 513, 1024, 100_000)
