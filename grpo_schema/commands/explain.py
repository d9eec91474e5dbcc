"""`grpo explain`: the batch schedule of a config, as numbers (JSON) and as a walk a newcomer can follow (text).

    grpo explain FILE [--world-size N] [--dataset-size N] [--max-prompt-length N] [--micro-steps N]
                      [--format text|json] [--profile P]... [--set KEY=VALUE]... [--KEY VALUE]...

`explain_result(result, ...)` is the reusable part: the CLI, `POST /api/v1/explain` and the web form's timeline
all build their answer with it, from a CheckResult.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from grpo_schema.commands.options import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_check_options,
    add_format,
    check_options,
    read_config,
    split_trl_tokens,
    trl_options,
)
from grpo_schema.commands.pycalls import add_call, call_name, chosen_calls, refuse_call_for_yaml
from grpo_schema.engine.batch_geometry import Geometry, valid_world_sizes
from grpo_schema.engine.batch_relations import relations
from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.coerce import INT64_MAX
from grpo_schema.engine.plan import derive_plan
from grpo_schema.engine.release import batch_meaning
from grpo_schema.engine.rules.batch import PROBLEM_CODES
from grpo_schema.engine.schedule import Order, walk
from grpo_schema.engine.words import plural, times


def declared_prompt_length(result: CheckResult, given: int | None) -> tuple[int | None, str]:
    """The longest prompt the run sees: --max-prompt-length, else max_prompt_length where the judged release
    truncates prompts to it (the file's, else the release's default), else the file's value as the user's word for
    it where the release no longer reads the key."""
    from grpo_schema.engine.release import prompt_cap

    if given is not None:
        return given, "command line"
    cap, source = prompt_cap(result.trl_version, result.raw)
    if cap is not None:
        return cap, source
    old = result.raw.get("max_prompt_length")
    if isinstance(old, int) and not isinstance(old, bool) and old > 0 and not source:
        return old, f"file (max_prompt_length, no longer read by TRL {judged_release(result)})"
    return None, "unknown"


def explain_result(
    result: CheckResult,
    dataset_size: int | None = None,
    micro_steps: int | None = None,
    max_prompt_length: int | None = None,
    order: Order | None = None,
) -> dict[str, Any]:
    """The explain document: derived numbers (with sources and formulas), the micro-step walk, notes, diagnostics.

    `order` (epoch -> permutation of dataset indices) adds dataset indices next to the prompt positions.
    """
    plan = None
    prompt_length, length_source = declared_prompt_length(result, max_prompt_length)
    if result.plan is not None and result.config is not None:
        sources = {
            **result.sources,
            "max_prompt_length": length_source,
            **({"dataset_size": "command line"} if dataset_size is not None else {}),
        }
        plan = derive_plan(
            result.config,
            result.world_size,
            dataset_size=dataset_size,
            max_prompt_length=prompt_length,
            sources=sources,
            meaning=batch_meaning(result.trl_version),
        )
    document: dict[str, Any] = {
        "version": 1,
        "path": result.path,
        "valid": result.valid,
        "world_size": result.world_size,
        "trl_version": result.trl_version,
        "trl_version_source": result.trl_version_source,
        "derived": plan.to_dict() if plan is not None else result.derived,
        "schedule": [step.to_dict() for step in walk(plan, micro_steps, order)] if plan is not None else [],
        "notes": notes(result, plan),
        "diagnostics": [d.to_dict() for d in result.diagnostics],
    }
    if plan is not None:
        from grpo_schema.render.explain_text import why_lines

        title, *lines = why_lines(document["derived"])
        document["why"] = {"title": title, "lines": [line.strip() for line in lines]}
    if result.config is not None:
        geometry = Geometry.of(result.config, batch_meaning(result.trl_version))
        document["relations"] = relation_dicts(geometry, result.world_size)
        document["valid_world_sizes"] = valid_world_sizes(geometry)
    return document


def relation_dicts(geometry: Geometry, world_size: int) -> list[dict[str, Any]]:
    """The batch relations with their numbers; a failed one names the code of the diagnostic that reports it."""
    out = []
    for relation in relations(geometry, world_size):
        entry = relation.to_dict()
        entry["code"] = None if relation.holds else PROBLEM_CODES[relation.problem]
        out.append(entry)
    return out


def notes(result: CheckResult, plan: Any) -> list[str]:
    """Plain sentences about what the numbers mean for this run."""
    rewritten = _rewrite_note(result)
    return ([rewritten] if rewritten else []) + _plan_notes(result, plan)


def _rewrite_note(result: CheckResult) -> str | None:
    """What a wrapper's config class changed before TRL saw the config (Unsloth's batch rewrite)."""
    if result.sources.get("per_device_train_batch_size") != "Unsloth's rewrite" or result.config is None:
        return None
    written = result.raw.get("per_device_train_batch_size", "its default")
    return (
        f"Unsloth trains with per_device_train_batch_size={result.config.per_device_train_batch_size}, not the "
        f"{written} written: its config class replaces it by num_generations when the generation batch is not a "
        "multiple of num_generations; the schedule shown is the one it runs"
    )


def _plan_notes(result: CheckResult, plan: Any) -> list[str]:
    if plan is None:
        return _no_schedule_note(result)
    every, GA = plan.generate_every_micro_steps, plan.gradient_accumulation_steps
    if plan.per_device_unit == "prompts":
        return _prompt_notes(result, plan)
    repeats = (
        "the trainer generates from it"
        if every == 1
        else f"the trainer generates from the first copy and ignores the {plural(every - 1, 'copy', 'copies')} after it"
    )
    out = _reuse_note(result, plan)
    out += [
        f"the sampler emits each chunk of {plural(plan.prompts_per_generation, 'prompt')} {times(every)} "
        f"(steps_per_generation x num_iterations) and each process's dataloader batch holds "
        f"{plural(plan.sampler_batch_size, 'row')} (per_device_train_batch_size x steps_per_generation): {repeats}"
    ]
    out += _on_policy_and_group_notes(plan, every, GA)
    out += _epoch_notes(plan)
    return out


def _no_schedule_note(result: CheckResult) -> list[str]:
    return (
        [
            f"TRL {judged_release(result)} refuses this batch geometry at world size {result.world_size}, so there "
            "is no schedule; "
            "see the diagnostics for the smallest edits"
        ]
        if result.config is not None
        else []
    )


def _on_policy_and_group_notes(plan: Any, every: int, GA: int) -> list[str]:
    """Whether training is on-policy, and how groups split over processes and optimizer steps."""
    out: list[str] = []
    if not plan.clipping_active:
        out.append(
            f"training is on-policy: gradient_accumulation_steps ({GA}) is a multiple of steps_per_generation"
            f" x num_iterations ({every}), so the weights never change between generating a batch and training"
            " on it; the ratio is 1 and epsilon / epsilon_high / delta have no effect"
        )
    if plan.groups_split_across_processes:
        out.append(
            "some groups straddle two processes (per_device_train_batch_size x steps_per_generation is not a "
            "multiple of num_generations); rewards are gathered before advantages, so this is harmless"
        )
    if plan.groups_split_across_optimizer_steps:
        out.append(
            f"a generation's completions are spread over several optimizer steps: each step sees on average "
            f"{plan.completions_per_prompt_per_optimizer_step:g} of the {plan.num_generations} completions of "
            "a prompt (advantages were computed over the whole group first)"
        )
    return out


def _epoch_notes(plan: Any) -> list[str]:
    """A dataset smaller than one generation, or the prompts each epoch leaves out."""
    out: list[str] = []
    if plan.dataset_size is not None and plan.generations_per_epoch == 0:
        out.append(
            f"the dataset ({plural(plan.dataset_size, 'prompt')}) is smaller than one generation "
            f"({plural(plan.prompts_per_generation, 'prompt')}): the sampler yields nothing and training "
            "cannot start"
        )
    elif plan.prompts_dropped_per_epoch:
        dropped = plan.prompts_dropped_per_epoch
        out.append(
            f"{plural(dropped, 'prompt')} {'is' if dropped == 1 else 'are'} left out of each epoch (the "
            f"remainder after {plural(plan.generations_per_epoch, 'chunk')} of "
            f"{plan.prompts_per_generation}); the shuffle changes which"
        )
    return out


def _reuse_note(result: CheckResult, plan: Any) -> list[str]:
    """TRL 0.16 reused completions across optimizer steps without a steps_per_generation: how the walk shows it."""
    from grpo_schema.engine.release import release_surface

    release = release_surface(result.trl_version)
    if (
        release is None
        or "steps_per_generation" in release.fields
        or plan.num_iterations < 2
        or plan.steps_per_generation != plan.gradient_accumulation_steps
    ):
        return []
    GA, b = plan.gradient_accumulation_steps, plan.completions_per_micro_batch
    return [
        f"TRL {release.release} has no steps_per_generation: on the first of every {plan.num_iterations} "
        f"optimizer steps each micro-step generates its own {plural(b, 'completion')} per process, and the "
        f"{plural(GA, 'micro-batch', 'micro-batches')} of that step are kept and trained on again in the next "
        f"{plan.num_iterations - 1}; the walk shows them as one generation of {GA} slices, which trains on the "
        "same completions at the same micro-steps with the same weights"
    ]


def _positive(text: str) -> int:
    # At most 64 bits: --dataset-size 1e400-like values overflowed the plan's float arithmetic (OverflowError).
    if not text.strip().isdigit() or not 1 <= int(text) <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {INT64_MAX}, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo explain",
        description="Show how a config's batch settings turn into generations, micro-steps "
        "and optimizer steps, process by process (as the chosen TRL release runs it; default 1.16).",
        epilog="exit status: 0 the config is valid, 1 it has errors (the diagnostics say which; no schedule when the "
        "batch geometry itself is refused), 2 bad usage or an unreadable file",
    )
    parser.add_argument("path", metavar="FILE", help="config file (YAML or JSON), or - for stdin")
    parser.add_argument(
        "--dataset-size",
        type=_positive,
        help="prompts in the training split: adds the per-epoch figures and the epoch boundary",
    )
    parser.add_argument(
        "--max-prompt-length",
        type=_positive,
        help="longest prompt in tokens (TRL never truncates prompts): gives the context length generation needs",
    )
    parser.add_argument(
        "--micro-steps",
        type=_positive,
        help="how many micro-steps to walk (default: two generations and at least one optimizer step)",
    )
    add_format(parser, ("text", "json"))
    add_call(parser)
    add_check_options(parser)
    return parser


def explain_command(argv: list[str]) -> int:
    from grpo_schema.engine.overrides import OverrideError, parse_trl_args
    from grpo_schema.engine.validate import check_text

    parser = build_parser()
    ours, trl = split_trl_tokens(argv, parser)
    args = parser.parse_args(ours)
    try:
        paths, trl_overrides = parse_trl_args(trl)
        if paths:
            raise UsageError("give the config as FILE, not --config")
        options = {**check_options(args, trl_overrides), **trl_options(args.trl_version, args.path)}
        data = read_config(args.path)
        refuse_call_for_yaml(args.call, args.path)
        shown = "<stdin>" if args.path == "-" else args.path
        if shown.endswith((".py", ".ipynb")):  # a schedule for each GRPOConfig(...) call of the file
            return _explain_python(data, shown, options, args)
    except (UsageError, OverrideError) as exc:
        print(f"grpo explain: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from grpo_schema.commands.verl import explain_verl, is_verl

    if is_verl(args.dialect, data, shown):  # a verl launch script or YAML: its card in verl's names
        return explain_verl(data, shown, args.format, args.verl_version)
    result = check_text(data, path=shown, **options)
    document = explain_result(result, args.dataset_size, args.micro_steps, args.max_prompt_length)
    if args.format == "json":
        from grpo_schema.render.machine import dumps

        sys.stdout.write(dumps(document, indent=2) + "\n")
    else:
        from grpo_schema.render.explain_text import render_explain

        sys.stdout.write(render_explain(document, data.decode("utf-8", "replace")))
    return EXIT_OK if result.valid else EXIT_INVALID


def judged_release(result: CheckResult) -> str:
    """The release the file is judged as, as the messages name it (its table's release, 1.16 for the engine's)."""
    from grpo_schema.engine.release import release_surface

    release = release_surface(result.trl_version)
    return release.release if release is not None else "1.16"


def _prompt_notes(result: CheckResult, plan: Any) -> list[str]:
    """TRL 0.14: no repeating sampler; each process takes per_device_train_batch_size prompts per micro-step."""
    b, G = plan.per_device_train_batch_size, plan.num_generations
    return [
        f"TRL {judged_release(result)} counts per_device_train_batch_size in prompts: each process takes "
        f"{plural(b, 'prompt')} per micro-step and generates {G} completions of each "
        f"({plan.completions_per_micro_batch} completions), with no divisibility check"
    ]


def _explain_python(data: bytes, shown: str, options: dict, args: argparse.Namespace) -> int:
    from grpo_schema.dialects.python import check_python

    checked = check_python(data, shown, **options)
    # Every call, or the one --call names; a file with no call has its one result (why there is none).
    chosen = chosen_calls(checked, args.call, shown) if checked.calls else list(range(len(checked.results)))
    results = [checked.results[i] for i in chosen]
    documents = [explain_result(r, args.dataset_size, args.micro_steps, args.max_prompt_length) for r in results]
    if checked.calls:
        for index, document in zip(chosen, documents):
            reading = checked.calls[index]
            document.update(call=index + 1, line=reading.line, cell=reading.cell)
    if args.format == "json":
        from grpo_schema.render.machine import dumps

        answer = documents[0] if len(documents) == 1 else {"version": 1, "path": shown, "calls": documents}
        sys.stdout.write(dumps(answer, indent=2) + "\n")
    else:
        from grpo_schema.render.explain_text import render_explain

        blocks = []
        for index, document, result in zip(chosen, documents, results):
            name = call_name(checked, index) if checked.calls else ""
            blocks.append(
                (f"GRPOConfig {name}:\n" if name else "") + render_explain(document, checked.texts.get(result.path, ""))
            )
        sys.stdout.write("\n".join(blocks))
    return EXIT_OK if all(r.valid for r in results) else EXIT_INVALID
