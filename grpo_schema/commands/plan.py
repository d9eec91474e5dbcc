"""`grpo plan FILE --hardware SPEC [--format text|json]`: will the config fit, and how long will it run.

The config's own diagnostics are listed without the batch rules' fix search (`grpo validate` does that).
Exit 0 when it fits, 1 when it does not or the config has errors, 2 for bad usage: a hardware spec that does
not parse, an engine that does not exist, a model neither the catalogue nor a config.json describes (each a
coded diagnostic with its fix, never a traceback).

`--engine` names whose code the estimate models: `trl` (TRL 1.16's GRPOTrainer, what `trl grpo` runs: the
default here and for `grpo validate --hardware`) or `grpo_runtime` (what `grpo train`, `grpo launch` and the
form run). The report is shown by `plan_render.py`; Python scripts and verl files are read by
`plan_inputs.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grpo_schema.commands.options import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_format,
    add_overrides,
    add_profiles,
    add_trl_version,
    add_world_size,
    chosen_profiles,
    trl_options,
)
from grpo_schema.commands.plan_inputs import code_setup, is_verl, python_configs, verl_config
from grpo_schema.commands.plan_render import memory_lines as memory_lines  # the service imports it from here
from grpo_schema.commands.plan_render import plan_document, render_text
from grpo_schema.commands.pycalls import add_call, refuse_call_for_yaml
from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware
from grpo_schema.engine.hardware.advise import plan_fit
from grpo_schema.engine.hardware.fit import section_of

VERL_NAMES_ITS_OWN = ("GRPO-R004", "GRPO-S002")  # no reward_funcs / no dataset_name: TRL keys a verl run lacks
USAGE_CODES = ("GRPO-H005", "GRPO-H008", "GRPO-H009")  # unknown model, hardware that does not parse, unknown engine


def check_for_hardware(data: Any, path: str, hardware: str | None, *, world_size: int | None = None, **options: Any):
    """Check a config (YAML text/bytes or a mapping) at the world size the hardware implies, then plan the fit.

    Without --world-size or num_processes in the file, the world size is the number of declared GPUs (less a
    vLLM server's GPUs), so the batch schedule is the one the run will have. `reads`: what the plan may read of the
    files the config names (grpo_schema.engine.hardware.reads), or a function of the checked config giving it."""
    from grpo_schema.engine.hardware.settings import world_size_of
    from grpo_schema.engine.validate import check_mapping, check_text

    check = check_mapping if isinstance(data, dict) else check_text
    plan_options = {
        k: options.pop(k)
        for k in (
            "model_config",
            "prompt_length",
            "mfu",
            "strategy",
            "local_files",
            "engine",
            "offload",
            "host_ram",
            "reads",
        )
        if k in options
    }
    options.pop("dataset_size", None)
    batch_fixes = options.pop("batch_fixes", True)
    result = check(data, path=path, world_size=world_size, suggest_fixes=False, **options)
    if callable(plan_options.get("reads")):  # the service decides what it reads from the config's own values
        plan_options["reads"] = plan_options["reads"](result)
    report = plan_fit(result, hardware, suggest_fixes=False, **plan_options)
    world = result.world_size
    if report.hardware is not None and not result.sources.get("world_size") and result.config is not None:
        world, _ = world_size_of(result, report.hardware)
    if world != result.world_size or (batch_fixes and not result.valid):
        result = check(
            data,
            path=path,
            world_size=world if world != result.world_size else world_size,
            suggest_fixes=batch_fixes,
            **options,
        )
    report = plan_fit(result, hardware, **plan_options)
    if report.setup is not None and not result.sources.get("world_size"):
        report.assumptions.insert(0, f"world size {result.world_size}: the declared GPUs")
    return result, report


def _overrides(sets: list[str], trl: list[str]) -> list[Any] | str:
    """--set KEY=VALUE and TRL-style `--key value` tokens as overrides (grpo validate's reading), or the error."""
    from grpo_schema.engine.check_input import Override
    from grpo_schema.engine.overrides import OverrideError, parse_trl_args

    try:
        paths, from_trl = parse_trl_args(trl)
        found = [Override.parse(text) for text in sets] + from_trl
    except (OverrideError, ValueError) as exc:
        return str(exc)
    return "give the config as FILE, not --config" if paths else found


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo plan",
        description="Per-GPU memory by part, whether it fits, "
        "the smallest fixes, and the run time, on declared hardware.",
    )
    parser.add_argument("paths", nargs="+", metavar="FILE")
    parser.add_argument(
        "--hardware",
        metavar="SPEC",
        help="e.g. 8xH100-80GB, 2x8xA100-40GB, 80GB (default: the file's hardware: section)",
    )
    add_format(parser, ("text", "json"))
    add_world_size(parser)
    add_profiles(parser)
    parser.add_argument(
        "--model-config",
        metavar="PATH",
        help="the model's config.json (else the local directory, the Hub cache, then the built-in catalogue)",
    )
    _add_run_options(parser)
    parser.add_argument("--mfu", type=float, default=None, help="model-FLOPs utilisation for the time (0.15)")
    add_overrides(parser, trl_flags=True)
    add_trl_version(parser)
    add_call(parser)
    return parser


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options that describe the run on the hardware: prompt length, engine, strategy, offload, host RAM."""
    parser.add_argument(
        "--prompt-length",
        type=int,
        default=None,
        help="prompt length in tokens to plan for "
        "(default: the hardware: section's prompt_length, else the 95th percentile of the dataset's "
        "prompts when it is on this machine, counted with the model's tokenizer, else the release's "
        "max_prompt_length where it truncates prompts (TRL up to 0.25), else 512; never above that "
        "truncation)",
    )
    parser.add_argument(
        "--engine",
        default=None,
        metavar="ENGINE",
        help="whose code runs the config: trl "
        "(default; `trl grpo`) or grpo_runtime (`grpo train`, `grpo launch`, the form)",
    )
    parser.add_argument(
        "--strategy",
        choices=("ddp", "zero1", "zero2", "zero3", "fsdp", "fsdp_grad_op"),
        help="distributed strategy (default: read from the file's launch keys)",
    )
    parser.add_argument(
        "--offload",
        choices=("none", "optimizer", "params", "both"),
        default=None,
        help="CPU offload of the optimizer states and/or the parameters (default: read from the "
        "deepspeed file, the accelerate config the launch names, or the hardware: section)",
    )
    parser.add_argument(
        "--host-ram",
        type=float,
        default=None,
        metavar="GIB",
        help="one node's host RAM in GiB "
        "(default: the hardware: section's host_ram_gib, or the node a spec such as p5.48xlarge "
        "names); gives a host-RAM verdict",
    )


def _refused_options(args: argparse.Namespace) -> bool:
    """Whether an option's value is refused (said on stderr): a hardware spec that does not parse, an unknown
    engine, a prompt length, host RAM or MFU out of range."""
    if args.hardware:
        try:
            parse_hardware(args.hardware)
        except HardwareError as exc:
            print(
                f"grpo plan: error GRPO-H008: {exc}\n  fix: write e.g. --hardware 8xH100-80GB, 2x8xA100-40GB or 80GB",
                file=sys.stderr,
            )
            return True
    from grpo_schema.engine.hardware.memory import ENGINES

    if args.engine is not None and args.engine not in ENGINES:
        print(
            f"grpo plan: error GRPO-H009: unknown engine {args.engine!r}\n  fix: --engine "
            f"{' or --engine '.join(ENGINES)}",
            file=sys.stderr,
        )
        return True
    if args.prompt_length is not None and args.prompt_length < 1:
        print("grpo plan: error: --prompt-length must be at least 1", file=sys.stderr)
        return True
    if args.host_ram is not None and not 0 < args.host_ram <= 1 << 20:
        print("grpo plan: error: --host-ram must be a size in GiB above 0", file=sys.stderr)
        return True
    if args.mfu is not None and not 0 < args.mfu <= 1:
        print("grpo plan: error: --mfu must be in (0, 1]", file=sys.stderr)
        return True
    return False


def plan_command(argv: list[str]) -> int:
    from grpo_schema.commands.options import split_trl_tokens

    parser = _parser()
    ours, trl = split_trl_tokens(argv, parser)
    args = parser.parse_args(ours)
    overrides = _overrides(args.overrides, trl)
    if isinstance(overrides, str):
        print(f"grpo plan: error: {overrides}", file=sys.stderr)
        return EXIT_USAGE
    if _refused_options(args):
        return EXIT_USAGE
    try:
        profiles = chosen_profiles(args.profile)
    except UsageError as exc:
        print(f"grpo plan: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    read = _read_units(args)
    if isinstance(read, int):
        return read
    units, usage_error = read
    documents, failed = [], False
    for path, data, release, written, call in units:
        planned = _plan_unit(args, path, data, release, written, profiles, overrides)
        if isinstance(planned, int):
            return planned
        result, report, implied = planned
        usage_error |= _usage_errors(report, path)
        failed |= report.fits is False or any(d.severity == "error" for d in report.diagnostics)
        failed |= any(d.severity == "error" for d in result.diagnostics)
        if args.format == "json":
            documents.append(_plan_document(result, report, implied, call))
        else:
            sys.stdout.write(render_text(result, report, call[3] if call else ""))
    if args.format == "json":
        sys.stdout.write(json.dumps({"version": 1, "files": documents}, indent=2, default=str) + "\n")
    return EXIT_USAGE if usage_error else EXIT_INVALID if failed else EXIT_OK


def _read_units(args: argparse.Namespace) -> tuple[list[tuple[Any, ...]], bool] | int:
    """Every config to plan, in order: (path, the config planned, its release, the file as written, which call of
    a Python file), and whether a Python file had problems; an exit code where a file cannot be read or named."""
    usage_error = False
    units = []
    for path in args.paths:
        try:
            data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        except OSError as exc:
            print(f"grpo plan: error: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        try:
            release = trl_options(args.trl_version, path)
            refuse_call_for_yaml(args.call, path)
            if not path.endswith((".py", ".ipynb")):
                units.append((path, data, release, data, None))
                continue
            # Every GRPOConfig(...) call (or the one --call names), with the values it trains with.
            planned, problems = python_configs(data, path, release, args.world_size, args.call)
        except UsageError as exc:
            print(f"grpo plan: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        for problem in problems:
            print(f"grpo plan: error: {path}: {problem}", file=sys.stderr)
        usage_error |= bool(problems)
        units += [(path, config, judged, data, name) for config, judged, name in planned]
    return units, usage_error


def _plan_unit(
    args: argparse.Namespace, path: str, data: Any, release: dict[str, Any], written: Any, profiles: Any, overrides: Any
) -> tuple[Any, Any, dict[str, Any]] | int:
    """One config checked and planned on the hardware: (result, report, what a verl file implies), or an exit
    code where it cannot be planned."""
    strategy, offload, implied = args.strategy, args.offload, {}
    if is_verl(data, path):  # planned as its TRL equivalent, or refused with the reason
        data, implied, problem = verl_config(data, path, args, overrides)
        if problem:
            print(f"grpo plan: error: {path}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        strategy, offload = strategy or implied["strategy"], offload or implied["offload"]
    result, report = check_for_hardware(
        data,
        path,
        args.hardware,
        world_size=args.world_size,
        **release,
        profiles=profiles,
        model_config=args.model_config,
        prompt_length=args.prompt_length,
        mfu=args.mfu,
        strategy=strategy,
        engine=args.engine,
        offload=offload,
        host_ram=args.host_ram,
        batch_fixes=False,
        overrides=overrides,
    )
    if report.hardware is None and not report.diagnostics and not section_of(result):
        print(
            f"grpo plan: error: {path}: no hardware declared: pass --hardware SPEC (e.g. 8xH100-80GB)", file=sys.stderr
        )
        return EXIT_USAGE
    if implied:  # the data and the reward are the verl file's own (data.train_files, its reward settings)
        result.diagnostics = [d for d in result.diagnostics if d.code not in VERL_NAMES_ITS_OWN]
    if path.endswith((".py", ".ipynb")):
        _python_file_notes(result, path, written)
    return result, report, implied


def _python_file_notes(result: Any, path: str, written: Any) -> None:
    """Drop the findings about the script around a Python file's call, and say when its code sets up LoRA or
    quantisation that the plan cannot see."""
    from grpo_schema.dialects.python.check import script_level

    dropped = script_level(result)
    result.diagnostics = [d for d in result.diagnostics if d not in dropped]
    if code_setup(written):
        print(
            f"grpo plan: note: {path} sets up LoRA or quantisation in code, outside GRPOConfig: the plan "
            "sizes the call as written (full fine-tuning); `grpo export` it and add use_peft / "
            "load_in_4bit to plan that",
            file=sys.stderr,
        )


def _usage_errors(report: Any, path: str) -> bool:
    """Print the findings that are mistakes on the command line (bad hardware spec, ...); True if any."""
    usage = [
        d for d in report.diagnostics if d.code in USAGE_CODES and (d.code != "GRPO-H008" or report.hardware is None)
    ]
    for diag in usage:
        print(
            f"grpo plan: error {diag.code}: {path}: {diag.message}" + (f"\n  fix: {diag.hint}" if diag.hint else ""),
            file=sys.stderr,
        )
    return bool(usage)


def _plan_document(result: Any, report: Any, implied: dict[str, Any], call: Any) -> dict[str, Any]:
    """One file's JSON document, with a verl file's notes and a Python file's call."""
    document = plan_document(result, report)
    if implied:
        document["verl_notes"] = implied["notes"]
    if call:
        document.update(call=call[0], call_line=call[1], call_cell=call[2])
    return document
