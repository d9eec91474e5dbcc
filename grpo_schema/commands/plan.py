"""`grpo plan FILE --hardware SPEC [--format text|json]`: will the config fit, and how long will it run.

The config's own diagnostics are listed without the batch rules' fix search (`grpo validate` does that).
Exit 0 when it fits, 1 when it does not or the config has errors, 2 for bad usage: a hardware spec that does
not parse, an engine that does not exist, a model neither the catalogue nor a config.json describes (each a
coded diagnostic with its fix, never a traceback).

`--engine` names whose code the estimate models: `trl` (TRL 1.16's GRPOTrainer, what `trl grpo` runs: the
default here and for `grpo validate --hardware`) or `grpo_runtime` (what `grpo train`, `grpo launch` and the
form run).
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
    add_profiles,
    add_trl_version,
    add_world_size,
    chosen_profiles,
    trl_options,
)
from grpo_schema.commands.pycalls import add_call, call_name, chosen_calls, refuse_call_for_yaml, where
from grpo_schema.engine.hardware.accelerators import GIB, HardwareError, parse_hardware
from grpo_schema.engine.hardware.advise import plan_fit
from grpo_schema.engine.hardware.fit import FitReport, section_of
from grpo_schema.engine.words import plural

PHASE_WORDS = {"update": "updating (every gradient built)"}
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


def render_text(result: Any, report: FitReport, call: str = "") -> str:
    from grpo_schema.render.text import release_reason

    lines = [
        f"{result.path}" + (f" (GRPOConfig {call})" if call else "") + ":",
        f"  judged as {release_reason(result.trl_version, result.trl_version_source)}",
    ]
    if report.hardware is None:
        lines.append("  no hardware declared (pass --hardware SPEC, e.g. 8xH100-80GB)")
    else:
        lines.append(f"  hardware: {report.hardware.describe()}, world size {result.world_size}")
    if report.model is not None:
        m = report.model
        lines.append(
            f"  model: {m.name} ({m.total_params() / 1e9:.2f}B parameters, {m.num_layers} layers, vocab "
            f"{m.vocab_size:,}; from {m.source})"
        )
    for note in report.assumptions:
        lines.append(f"  assumes {note}")
    mem = report.memory
    if mem is not None:
        cap = report.capacity / GIB
        verdict = "fits" if report.fits else "does NOT fit"
        lines.append(
            f"  per GPU: {mem.total / GIB:.1f} GiB of {cap:.0f} GiB ({verdict}; peak while "
            f"{PHASE_WORDS.get(mem.peak_phase, mem.peak_phase)})"
        )
        width = max(len(p.name) for p in mem.parts)
        for part in mem.parts:
            marker = " " if part.phase in ("held", mem.peak_phase) else "~"
            lines.append(f"   {marker}{part.name:<{width}}  {part.bytes / GIB:7.2f} GiB  {part.phase:<10} {part.note}")
        lines.append("   (~: a phase other than the peak, not in the total)")
        if mem.kv_cache_tokens is not None:
            lines.append(
                f"  vLLM KV cache: {mem.kv_cache_tokens:,} tokens; a generation batch needs "
                f"{mem.kv_cache_tokens_needed:,}"
            )
    lines += host_lines(report)
    if report.time is not None:
        lines.append(f"  time: {report.time.describe()}")
    for diag in report.diagnostics:
        lines.append(f"  {diag.severity} {diag.code}: {diag.message}")
        if diag.hint:
            lines.append(f"    {diag.hint}")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors:
        them = "it" if len(errors) == 1 else "them"
        lines.append(f"  the config itself has {plural(len(errors), 'error')}: `grpo validate` lists {them}")
    return "\n".join(lines) + "\n"


# The assumptions that come from the launch files, the quantisation and the data: shown by every surface.
SOURCED_NOTES = (
    "distributed strategy",
    "optimizer states",
    "parameters ",
    "reduce bucket size",
    "max live parameters",
    "mixed precision",
    "launch file",
    "base projections",
    "prompts",
)


def memory_lines(report: FitReport) -> list[str]:
    """The fit in a few lines: the per-GPU total, where the sharding, quantisation and prompt length came from,
    and the host RAM of a node. grpo validate --hardware prints them, the form's memory panel shows them."""
    mem = report.memory
    if mem is None:
        return []
    verdict = "fits" if report.fits else "does NOT fit"
    lines = [
        f"memory per GPU: {mem.total / GIB:.1f} of {report.capacity / GIB:.0f} GiB ({verdict}; peak while "
        f"{PHASE_WORDS.get(mem.peak_phase, mem.peak_phase)})"
    ]
    lines += [f"assumes {note}" for note in report.assumptions if note.startswith(SOURCED_NOTES)]
    host = host_lines(report, indent="")
    if host:
        lines.append(host[0])
        lines += [line.strip() for line in host if line.lstrip().startswith("(DeepSpeed")]
    return lines


def host_lines(report: FitReport, indent: str = "  ") -> list[str]:
    """The host-RAM line of one node and its parts (the same text for grpo plan and grpo validate --hardware)."""
    host = report.host
    if host is None:
        return []
    if report.host_capacity is not None:
        verdict = (
            f" of {report.host_capacity / GIB:.0f} GiB ({report.host_capacity_source}; "
            + ("fits" if host.total <= report.host_capacity else "does NOT fit")
            + ")"
        )
    else:
        verdict = " (no host RAM declared: --host-ram GIB, or a node such as p5.48xlarge)"
    phase = "loading the model" if host.peak_phase == "loading" else "training"
    lines = [
        f"{indent}host RAM per node: {host.total / GIB:.1f} GiB{verdict}; peak while {phase}, "
        f"{host.processes} process{'es' if host.processes != 1 else ''}"
    ]
    for part in host.parts:
        marker = " " if part.phase in ("always", host.peak_phase) else "~"
        lines.append(f"{indent} {marker}{part.name:<18}  {part.bytes / GIB:7.2f} GiB  {part.note}")
    if host.deepspeed_estimate is not None:
        lines.append(
            f"{indent}  (DeepSpeed's own estimator, with its 1.5x buffer factor: "
            f"{host.deepspeed_estimate / GIB:.1f} GiB of CPU RAM a node)"
        )
    return lines


def plan_document(result: Any, report: FitReport) -> dict[str, Any]:
    out = report.to_dict()
    out.update(
        memory_lines=memory_lines(report),
        path=result.path,
        valid=result.valid,
        world_size=result.world_size,
        derived=result.derived,
        trl_version=result.trl_version,
        trl_version_source=result.trl_version_source,
        config_diagnostics=[d.to_dict() for d in result.diagnostics],
    )
    return out


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


def plan_command(argv: list[str]) -> int:
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
    parser.add_argument("--mfu", type=float, default=None, help="model-FLOPs utilisation for the time (0.15)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="override a config key (repeatable); TRL-style `--key value` works as well, as in "
        "grpo validate (`--vllm_mode colocate`)",
    )
    add_trl_version(parser)
    add_call(parser)
    from grpo_schema.commands.options import split_trl_tokens

    ours, trl = split_trl_tokens(argv, parser)
    args = parser.parse_args(ours)
    overrides = _overrides(args.overrides, trl)
    if isinstance(overrides, str):
        print(f"grpo plan: error: {overrides}", file=sys.stderr)
        return EXIT_USAGE
    if args.hardware:
        try:
            parse_hardware(args.hardware)
        except HardwareError as exc:
            print(
                f"grpo plan: error GRPO-H008: {exc}\n  fix: write e.g. --hardware 8xH100-80GB, 2x8xA100-40GB or 80GB",
                file=sys.stderr,
            )
            return EXIT_USAGE
    from grpo_schema.engine.hardware.memory import ENGINES

    if args.engine is not None and args.engine not in ENGINES:
        print(
            f"grpo plan: error GRPO-H009: unknown engine {args.engine!r}\n  fix: --engine "
            f"{' or --engine '.join(ENGINES)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.prompt_length is not None and args.prompt_length < 1:
        print("grpo plan: error: --prompt-length must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.host_ram is not None and not 0 < args.host_ram <= 1 << 20:
        print("grpo plan: error: --host-ram must be a size in GiB above 0", file=sys.stderr)
        return EXIT_USAGE
    if args.mfu is not None and not 0 < args.mfu <= 1:
        print("grpo plan: error: --mfu must be in (0, 1]", file=sys.stderr)
        return EXIT_USAGE
    try:
        profiles = chosen_profiles(args.profile)
    except UsageError as exc:
        print(f"grpo plan: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    documents, failed, usage_error = [], False, False
    units = []  # (path, the config planned, its release, the file as written, which call of a Python file)
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
            planned, problems = _python_configs(data, path, release, args.world_size, args.call)
        except UsageError as exc:
            print(f"grpo plan: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        for problem in problems:
            print(f"grpo plan: error: {path}: {problem}", file=sys.stderr)
        usage_error |= bool(problems)
        units += [(path, config, judged, data, name) for config, judged, name in planned]
    for path, data, release, written, call in units:
        strategy, offload, implied = args.strategy, args.offload, {}
        if _is_verl(data, path):  # planned as its TRL equivalent, or refused with the reason
            data, implied, problem = _verl_config(data, path, args, overrides)
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
                f"grpo plan: error: {path}: no hardware declared: pass --hardware SPEC (e.g. 8xH100-80GB)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if implied:  # the data and the reward are the verl file's own (data.train_files, its reward settings)
            result.diagnostics = [d for d in result.diagnostics if d.code not in VERL_NAMES_ITS_OWN]
        if path.endswith((".py", ".ipynb")):
            from grpo_schema.dialects.python.check import script_level

            dropped = script_level(result)
            result.diagnostics = [d for d in result.diagnostics if d not in dropped]
            if _code_setup(written):
                print(
                    f"grpo plan: note: {path} sets up LoRA or quantisation in code, outside GRPOConfig: the plan "
                    "sizes the call as written (full fine-tuning); `grpo export` it and add use_peft / "
                    "load_in_4bit to plan that",
                    file=sys.stderr,
                )
        usage = [
            d
            for d in report.diagnostics
            if d.code in USAGE_CODES and (d.code != "GRPO-H008" or report.hardware is None)
        ]
        if usage:
            for diag in usage:
                print(
                    f"grpo plan: error {diag.code}: {path}: {diag.message}"
                    + (f"\n  fix: {diag.hint}" if diag.hint else ""),
                    file=sys.stderr,
                )
            usage_error = True
        failed |= report.fits is False or any(d.severity == "error" for d in report.diagnostics)
        failed |= any(d.severity == "error" for d in result.diagnostics)
        if args.format == "json":
            documents.append(plan_document(result, report))
            if implied:
                documents[-1]["verl_notes"] = implied["notes"]
            if call:
                documents[-1].update(call=call[0], call_line=call[1], call_cell=call[2])
        else:
            sys.stdout.write(render_text(result, report, call[3] if call else ""))
    if args.format == "json":
        sys.stdout.write(json.dumps({"version": 1, "files": documents}, indent=2, default=str) + "\n")
    return EXIT_USAGE if usage_error else EXIT_INVALID if failed else EXIT_OK


def _python_configs(
    data: bytes, path: str, release: dict, world_size: int | None, call: int | None
) -> tuple[list[tuple[bytes, dict, tuple]], list[str]]:
    """Each GRPOConfig(...) call of a Python file (or the one `call` names) as the YAML the planner reads
    (Unsloth's rewrite applied), with the release it was judged at and which call it is (number, line, cell,
    its name in the text output); and why
    the others cannot be planned (values known only at run time), or that the file has no call."""
    from grpo_schema.dialects.python import check_python
    from grpo_schema.dialects.python.export import trained_yaml

    options = dict(release, **({"world_size": world_size} if world_size else {}))
    checked = check_python(data, path, **options)
    if not checked.calls:
        return [], ["no GRPOConfig(...) call to plan"]
    planned, problems = [], []
    for index in chosen_calls(checked, call, path):
        text, problem = trained_yaml(checked, index)
        result = checked.results[index]
        if problem:
            problems.append(problem)
            continue
        judged = {"trl_version": result.trl_version, "trl_version_source": result.trl_version_source}
        reading = checked.calls[index]
        name = call_name(checked, index) or (f"call 1, {where(reading)}" if call else "")
        planned.append(((text or "").encode("utf-8"), judged, (index + 1, reading.line, reading.cell, name)))
    return planned, problems


def _is_verl(data: bytes, path: str) -> bool:
    from grpo_schema.commands.verl import is_verl

    return not path.endswith((".py", ".ipynb")) and is_verl(None, data, path)


def _verl_config(data: bytes, path: str, args: argparse.Namespace, overrides: list) -> tuple[bytes, dict, str]:
    """A verl file through the conversion to TRL (the note on stderr says so), or why it is not planned."""
    from grpo_schema.commands.verl import planned_as_trl

    if args.world_size or overrides or args.profile:
        return (
            b"",
            {},
            (
                "--world-size, --set and --profile are not read for verl files: the GPUs are the file's "
                "trainer.n_gpus_per_node x trainer.nnodes, and overrides go in the script"
            ),
        )
    text, implied, notes, problem = planned_as_trl(data, path)
    if problem:
        return b"", {}, f"not planned: {problem}"
    if args.format != "json":  # beside the plan; the JSON document has them as verl_notes
        for note in notes:
            print(f"grpo plan: note: {note}")
    return text, {**implied, "notes": notes}, ""


def _code_setup(data: bytes) -> bool:
    return any(word in data for word in (b"get_peft_model", b"LoraConfig", b"load_in_4bit", b"BitsAndBytesConfig"))
