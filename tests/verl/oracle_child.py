"""Run by the verl environment's interpreter (.venv-verl): verl 0.9.1's own verdict on many override sets at once.

Reads a JSON list of cases from stdin, each {"overrides": [...], "config_name": "ppo_trainer"}; writes a JSON list
of verdicts: {"ok": true} or {"ok": false, "error": exception class, "message": first line}. One process and one
Hydra initialisation for all cases: verl's import takes ~11 s, a compose + validate_config under a second.
Also answers {"chunk": [length, chunks]} with DataProto.chunk and {"micro": [size, micro]} with
prepare_micro_batches, verl's cluster-time code that runs on the CPU; {"critic": case} with verl's critic config
class (its __post_init__ and validate, as validate_config calls them; the critic's model section is left out, since
building it loads the model's files); and {"lora_rank": r} with verl's get_vllm_max_lora_rank, read from its source
file without importing vLLM (verl's own fallback list of vLLM's ranks).
"""

import contextlib
import io
import json
import os
import sys
import warnings

os.environ.setdefault("VERL_USE_EXTERNAL_PLUGINS", "none")
warnings.filterwarnings("ignore")


def verdict(case, compose, validate_config, need_reference_policy, need_critic):
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cfg = compose(config_name=case.get("config_name", "ppo_trainer"), overrides=case["overrides"])
            validate_config(cfg, need_reference_policy(cfg), need_critic(cfg))
    except BaseException as exc:  # noqa: BLE001 - every failure is a verdict
        return {"ok": False, "error": type(exc).__name__, "message": _chain(exc)}
    return {"ok": True}


def _chain(exc):
    """The exception's text with its causes' (Hydra wraps a dataclass's refusal in an InstantiationException)."""
    parts = []
    while exc is not None and len(parts) < 4:
        parts.append(str(exc).strip())
        exc = exc.__cause__ or exc.__context__
    return " | ".join(p for p in parts if p)[:1000]


def chunk_verdict(length, chunks):
    import torch
    from verl.protocol import DataProto

    data = DataProto.from_dict(tensors={"x": torch.zeros(length, 1)})
    try:
        data.chunk(chunks)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__, "message": str(exc).splitlines()[0] if str(exc) else ""}
    return {"ok": True}


def micro_verdict(size, micro):
    import torch
    from tensordict import TensorDict
    from verl.utils import tensordict_utils as tu
    from verl.workers.engine.utils import prepare_micro_batches

    data = TensorDict({"x": torch.zeros(size, 1)}, batch_size=[size])
    tu.assign_non_tensor(data, use_dynamic_bsz=False, micro_batch_size_per_gpu=micro)
    try:
        batches, _ = prepare_micro_batches(data)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__, "message": str(exc).splitlines()[0] if str(exc) else ""}
    return {"ok": True, "batches": len(batches)}


def critic_verdict(case, compose):
    from omegaconf import open_dict
    from verl.utils.config import omega_conf_to_dataclass

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            cfg = compose(config_name=case.get("config_name", "ppo_trainer"), overrides=case["overrides"])
            with open_dict(cfg.critic):
                cfg.critic.model = None
            critic = omega_conf_to_dataclass(cfg.critic)
            critic.validate(cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes, cfg.data.train_batch_size)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__, "message": _chain(exc)}
    return {"ok": True}


def lora_rank_verdict(rank):
    import ast
    import typing

    import verl

    path = os.path.join(os.path.dirname(verl.__file__), "workers", "rollout", "vllm_rollout", "utils.py")
    tree = ast.parse(open(path).read())
    (function,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_vllm_max_lora_rank"]
    space = {"Literal": typing.Literal, "get_args": typing.get_args}
    exec(compile(ast.Module([function], []), path, "exec"), space)  # noqa: S102 - verl's own function, alone
    try:
        return {"ok": True, "rank": space["get_vllm_max_lora_rank"](rank)}
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": type(exc).__name__, "message": str(exc)}


def main():
    import verl.trainer.config as config_package
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    cases = json.load(sys.stdin)
    out = [None] * len(cases)
    trainer = os.path.dirname(config_package.__file__)
    # verl's fully async trainer keeps its configs beside it; they extend ppo_trainer through Hydra's searchpath,
    # which names verl's folders relative to the folder verl is installed in
    fully_async = os.path.join(
        os.path.dirname(os.path.dirname(trainer)), "experimental", "fully_async_policy", "config"
    )
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(trainer))))
    for folder in (trainer, fully_async):
        todo = [
            i
            for i, case in enumerate(cases)
            if (case.get("critic") or case).get("config_name", "").startswith("fully_async") == (folder == fully_async)
        ]
        if not todo:
            continue
        with initialize_config_dir(config_dir=folder, version_base=None):
            for i in todo:
                case = cases[i]
                if "critic" in case:
                    out[i] = critic_verdict(case["critic"], compose)
                elif "lora_rank" in case:
                    out[i] = lora_rank_verdict(case["lora_rank"])
                elif "chunk" in case:
                    out[i] = chunk_verdict(*case["chunk"])
                elif "micro" in case:
                    out[i] = micro_verdict(*case["micro"])
                else:
                    out[i] = verdict(case, compose, validate_config, need_reference_policy, need_critic)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
