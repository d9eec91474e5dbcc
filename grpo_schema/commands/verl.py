"""The verl dialect on the command line: which files are verl's, `grpo explain` of a verl run, and `grpo convert`.

`grpo validate` and `grpo explain` take verl launch scripts and YAML when `--dialect verl` says so or the file's
content shows it (a `python3 -m verl.trainer.main_ppo` launch, or YAML with verl's sections); everything else is
TRL's as before.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def is_verl(dialect: str | None, data: bytes, path: str) -> bool:
    if dialect in ("trl", "verl"):
        return dialect == "verl"
    from grpo_schema.dialects.verl.check import looks_like_verl

    return looks_like_verl(data.decode("utf-8", "replace"))


def options_not_for_verl(args: argparse.Namespace, trl_overrides: Any = None) -> str | None:
    """The validate options that have no meaning for a verl file (refused, never silently dropped)."""
    given = [
        name
        for name, value in (
            ("--set", getattr(args, "overrides", None) or trl_overrides),
            ("--world-size", getattr(args, "world_size", None)),
            ("--hardware", getattr(args, "hardware", None)),
            ("--fix", getattr(args, "fix", False)),
            ("--doctor", getattr(args, "doctor", False)),
            ("--world-sizes", getattr(args, "world_sizes", None)),
            ("--profile", getattr(args, "profile", None)),
        )
        if value
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not read for verl files: the GPUs are the "
        "file's trainer.n_gpus_per_node x trainer.nnodes, and overrides go in the script"
    )


def check_verl(data: bytes, path: str, verl_version: str | None = None) -> Any:
    from grpo_schema.dialects.verl.check import check_verl_text

    return check_verl_text(data, path, verl_version)


def explain_verl(data: bytes, path: str, fmt: str = "text", verl_version: str | None = None) -> int:
    from grpo_schema.dialects.verl.check import results_by_run
    from grpo_schema.dialects.verl.schedule import schedule
    from grpo_schema.render.verl_explain import render_verl_explain

    runs = results_by_run(data.decode("utf-8", "replace"), path, verl_version)
    if not runs:
        print(f"grpo explain: {path}: no verl launch found", file=sys.stderr)
        return EXIT_INVALID
    shown = []
    invalid = False
    for run, diagnostics, config in runs:
        errors = [d for d in diagnostics if d.severity == "error"]
        invalid = invalid or bool(errors)
        notes = [f"{d.severity} {d.code} line {d.line}: {d.message}" for d in diagnostics if d.severity != "info"]
        shown.append((run.line, schedule(config) if config is not None else {"complete": False}, notes))
    if fmt == "json":
        from grpo_schema.render.machine import dumps

        sys.stdout.write(dumps([{"line": line, "schedule": s, "problems": p} for line, s, p in shown], indent=2) + "\n")
    else:
        sys.stdout.write(render_verl_explain(shown))
    return EXIT_INVALID if invalid else EXIT_OK


def convert_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="grpo convert",
        description="write a config in the other dialect: a TRL "
        "config as a verl launch script, a verl script or YAML as a TRL config",
    )
    parser.add_argument("path", metavar="FILE")
    parser.add_argument("--to", choices=("verl", "trl"), required=True)
    parser.add_argument("--world-size", type=int, default=None, help="TRL's world size (default: the file's)")
    parser.add_argument("--output", "-o", metavar="PATH")
    args = parser.parse_args(argv)
    try:
        with open(args.path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        print(f"grpo convert: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text, problem = _to_verl(data, args) if args.to == "verl" else _to_trl(data, args.path)
    if problem:
        print(f"grpo convert: {args.path}: no {args.to} equivalent: {problem}", file=sys.stderr)
        return EXIT_INVALID
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _to_verl(data: bytes, args: argparse.Namespace) -> tuple[str, str]:
    from grpo_schema.engine.validate import check_text

    options = {"world_size": args.world_size} if args.world_size else {}
    text, _, problem = trl_to_verl_script(check_text(data, path=args.path, **options))
    return text, problem


def _to_trl(data: bytes, path: str) -> tuple[str, str]:
    from grpo_schema.dialects.verl.convert import trl_yaml, verl_to_trl

    config, problem = _one_config(data, path)
    if config is None:
        return "", problem
    conversion = verl_to_trl(config)
    return (trl_yaml(conversion), "") if conversion.ok else ("", conversion.refused)


def verl_schema_text() -> str:
    import json

    from grpo_schema.dialects.verl.schema import verl_json_schema

    return json.dumps(verl_json_schema(), indent=1) + "\n"


def planned_as_trl(data: bytes, path: str) -> tuple[bytes, dict[str, Any], list[str], str]:
    """A verl file as the TRL config `grpo plan` sizes: the conversion of `grpo convert --to trl`, plus what the
    memory model needs and the conversion leaves out (the colocated rollout engine's share of each GPU, LoRA), the
    plan options verl's FSDP settings give (strategy, offload), the notes saying so, or why it is not planned."""
    from grpo_schema.dialects.verl.config import A

    config, problem = _one_config(data, path)
    if config is None:
        return b"", {}, [], problem
    strategy = str(config[A + "strategy"])
    if config.megatron or strategy not in ("fsdp", "fsdp2"):
        return (
            b"",
            {},
            [],
            (
                f"actor.strategy {strategy}: the memory model knows data-parallel, ZeRO and FSDP "
                "sharding, not Megatron's"
            ),
        )
    text, problem = _to_trl(data, path)
    if problem:
        return b"", {}, [], problem
    extra, notes = _memory_settings(config, path)
    offload = _offload_of(config, notes)
    added = "".join(
        f"{key}: {str(value).lower() if isinstance(value, bool) else value}\n" for key, value in extra.items()
    )
    return (text + added).encode("utf-8"), {"strategy": "fsdp", "offload": offload}, notes, ""


def _memory_settings(config: Any, path: str) -> tuple[dict[str, Any], list[str]]:
    """The TRL keys the memory model needs and the conversion leaves out (the colocated rollout's share, its
    tensor parallelism, LoRA), and the notes saying so."""
    from grpo_schema.dialects.verl.config import R

    extra = {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": float(config[R + "gpu_memory_utilization"]),
    }
    notes = [
        f"{path} is a verl run: planned as its TRL equivalent (grpo convert --to trl) with TRL's memory "
        f"model, FSDP full sharding, and the {config[R + 'name']} rollout colocated on the training GPUs "
        f"with gpu_memory_utilization {extra['vllm_gpu_memory_utilization']}; TRL's reward_funcs and "
        "dataset_name are not asked for (the verl file names its own reward and data)"
    ]
    if int(config[R + "tensor_model_parallel_size"] or 1) > 1:
        extra["vllm_tensor_parallel_size"] = int(config[R + "tensor_model_parallel_size"])
    if int(config["actor_rollout_ref.model.lora_rank"] or 0) > 0:
        extra.update(
            use_peft=True,
            lora_r=int(config["actor_rollout_ref.model.lora_rank"]),
            lora_alpha=int(config["actor_rollout_ref.model.lora_alpha"]),
        )
        notes.append(f"LoRA rank {extra['lora_r']} (model.lora_rank) sized as TRL's use_peft")
    return extra, notes


def _offload_of(config: Any, notes: list[str]) -> str:
    """The plan's --offload from actor.fsdp_config (noted when anything is offloaded)."""
    from grpo_schema.dialects.verl.config import A

    params, optim = bool(config[A + "fsdp_config.param_offload"]), bool(config[A + "fsdp_config.optimizer_offload"])
    offload = {(True, True): "both", (True, False): "params", (False, True): "optimizer"}.get((params, optim), "none")
    if offload != "none":
        notes.append(f"CPU offload {offload} (actor.fsdp_config param_offload / optimizer_offload)")
    return offload


def _one_config(data: bytes, path: str) -> tuple[Any, str]:
    from grpo_schema.dialects.verl.check import results_by_run

    runs = results_by_run(data.decode("utf-8", "replace"), path)
    if len(runs) != 1:
        return None, f"the file has {len(runs)} verl launches; convert one at a time"
    _, diagnostics, config = runs[0]
    if config is None or any(d.severity == "error" for d in diagnostics):
        return None, "the verl config is not valid (grpo validate --dialect verl shows why)"
    return config, ""


def verl_import(data: bytes, path: str = "<import>") -> dict[str, Any]:
    """A verl file for the form: its diagnostics (lines in the verl file), each run's schedule card in verl's
    names with the TRL equivalents, and the conversion to TRL (`grpo convert --to trl`'s): the mapping the form
    edits and its YAML with the lossy mappings as comments, or why there is none. The same calls the CLI makes."""
    from grpo_schema.dialects.verl.check import check_verl_text, results_by_run
    from grpo_schema.dialects.verl.convert import trl_yaml, verl_to_trl
    from grpo_schema.dialects.verl.schedule import schedule
    from grpo_schema.render.verl_explain import card_lines

    text = data.decode("utf-8", "replace")
    diagnostics = [d.to_dict() for d in check_verl_text(text, path).diagnostics]
    cards = [
        {"line": run.line, "lines": card_lines(schedule(config) if config is not None else {"complete": False})}
        for run, _, config in results_by_run(text, path)
    ]
    config, refused = _one_config(data, path)
    conversion = verl_to_trl(config) if config is not None else None
    if conversion is not None and not conversion.ok:
        refused = conversion.refused
    converted = conversion is not None and conversion.ok
    return {
        "dialect": "verl",
        "diagnostics": diagnostics,
        "cards": cards,
        "refused": refused,
        "config": dict(conversion.settings) if converted else None,
        "lossy": list(conversion.lossy) if converted else [],
        "trl_yaml": trl_yaml(conversion) if converted else None,
    }


def trl_to_verl_script(result: Any) -> tuple[str, list[str], str]:
    """A checked TRL config as a verl launch script (`grpo convert --to verl`), its lossy mappings, or why not."""
    from grpo_schema.dialects.verl.convert import trl_to_verl, verl_script

    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors or result.config is None:
        first = f" ({errors[0].code}: {errors[0].message})" if errors else ""
        return "", [], f"the TRL config is not valid{first}; grpo validate shows every problem"
    conversion = trl_to_verl(result.migrated or result.config, result.world_size)
    if not conversion.ok:
        return "", [], conversion.refused
    return verl_script(conversion), list(conversion.lossy), ""
