"""What `grpo plan` plans besides a YAML config: each GRPOConfig(...) call of a Python script or notebook, and a
verl config planned as its TRL equivalent (or refused with the reason)."""

from __future__ import annotations

import argparse

from grpo_schema.commands.pycalls import call_name, chosen_calls, where


def python_configs(
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


def is_verl(data: bytes, path: str) -> bool:
    from grpo_schema.commands.verl import is_verl

    return not path.endswith((".py", ".ipynb")) and is_verl(None, data, path)


def verl_config(data: bytes, path: str, args: argparse.Namespace, overrides: list) -> tuple[bytes, dict, str]:
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


def code_setup(data: bytes) -> bool:
    return any(word in data for word in (b"get_peft_model", b"LoraConfig", b"load_in_4bit", b"BitsAndBytesConfig"))
