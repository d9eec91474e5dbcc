"""`grpo explain` as text: the settings, what they give, a micro-step walk, why the sampler repeats, and notes.

Renders the document `grpo_schema.commands.explain.explain_result` builds (plain JSON-shaped data), so the text and the
JSON always say the same thing.
"""

from __future__ import annotations

from typing import Any

MAX_PROCESSES_SHOWN = 8
_MEANING = {
    "per_device_train_batch_size": "completions each process trains on per micro-step",
    "num_generations": "completions sampled per prompt (one group)",
    "gradient_accumulation_steps": "micro-steps accumulated into one optimizer step",
    "steps_per_generation": "micro-steps that share one generation (per pass)",
    "generation_batch_size": "completions generated at once, over all processes",
    "num_iterations": "passes over each generation",
    "world_size": "training processes over all machines",
}


def _source(entry: dict[str, Any]) -> str:
    return entry["source"]


def settings(derived: dict[str, Any]) -> list[str]:
    inputs = derived["inputs"]
    rows = [(name, inputs[name]) for name in _MEANING if name in inputs]
    width = max(len(name) for name, _ in rows)
    out = ["The settings that shape the batch"]
    meaning = dict(_MEANING)
    if derived.get("per_device_unit") == "prompts":  # TRL 0.14: rows are prompts, the trainer samples each group
        meaning["per_device_train_batch_size"] = (
            "prompts each process takes per micro-step (num_generations completions each)"
        )
    for name, entry in rows:
        label = "world size" if name == "world_size" else name
        out.append(f"  {label:<{width}}  {entry['value']!s:>5}  {_source(entry):<12}  {meaning[name]}")
    return out


def _ratio(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def _count(value: float, word: str) -> str:
    return f"{_ratio(value)} {word}{'' if value == 1 else 's'}"


def consequences(d: dict[str, Any]) -> list[str]:
    f = d["formulas"]
    U, G, every, GA = (
        d["prompts_per_generation"],
        d["num_generations"],
        d["generate_every_micro_steps"],
        d["gradient_accumulation_steps"],
    )
    steps = _step_rate(d)
    out = [
        "What they give",
        f"  generation batch  {f['generation_batch_size']} completions = {_count(U, 'prompt')} x {_count(G, 'completion')}",
        f"  per process       {d['completions_per_process_per_generation']} completions per generation "
        f"({_count(d['prompts_per_process_per_generation'], 'prompt')})",
        f"  generation        every {every} micro-step{'s' if every != 1 else ''} "
        f"(steps_per_generation x num_iterations = {d['steps_per_generation']} x {d['num_iterations']})",
        f"  optimizer step    every {GA} micro-step{'s' if GA != 1 else ''}, on "
        f"{d['completions_per_optimizer_step']} completions; {steps}",
        "  old log-probs     " + _old_logprobs(d),
        "  clipping          "
        + (
            "can act: the weights change while a generation is still being trained on"
            if d["clipping_active"]
            else "never acts: training is on-policy (ratio = 1)"
        ),
        f"  context length    {d['context_length_needed'] or 'unknown'}: {d['context_length_note']}"
        + (
            "; the prompt length is the file's max_prompt_length, which TRL 1.16 no longer reads or enforces"
            if _prompt_length_from_file(d)
            else ""
        ),
    ]
    if d.get("vllm_max_num_seqs"):
        out.append(
            f"  vLLM (colocate)   max_num_seqs {d['vllm_max_num_seqs']} (per_device_train_batch_size x "
            "vllm_tensor_parallel_size x steps_per_generation); TRL fixes max_num_batched_tokens at 4096"
        )
    out += _epoch_lines(d)
    return out


def _step_rate(d: dict[str, Any]) -> str:
    """Optimizer steps per generation, or generations per optimizer step, whichever is at least one."""
    per_gen = d["optimizer_steps_per_generation"]
    return (
        f"{_ratio(per_gen)} optimizer step{'s' if per_gen != 1 else ''} per generation"
        if per_gen >= 1
        else f"{_ratio(d['generations_per_optimizer_step'])} generations per optimizer step"
    )


def _epoch_lines(d: dict[str, Any]) -> list[str]:
    """Per epoch and the whole run, when the dataset's size is known."""
    if d.get("dataset_size") is None:
        return []
    out: list[str] = []
    out.append(
        f"  per epoch         {_count(d['dataset_size'], 'prompt')} -> "
        f"{_count(d['generations_per_epoch'], 'generation')}, "
        f"{_count(d['micro_steps_per_epoch'], 'micro-step')}, "
        f"{_count(d['optimizer_steps_per_epoch'], 'optimizer step')} "
        f"({_count(d['unique_prompts_per_epoch'], 'prompt')} used, {d['prompts_dropped_per_epoch']} left out)"
    )
    epochs = d.get("epochs")
    out.append(
        f"  whole run         {_count(d['total_optimizer_steps'], 'optimizer step')}"
        + (f" ({_ratio(epochs)} epoch{'s' if epochs != 1 else ''})" if epochs else "")
    )
    return out


def _old_logprobs(d: dict[str, Any]) -> str:
    if not d["old_logprobs_needed"]:
        return "not computed (the current policy's, detached, stand in: nothing has changed yet)"
    if d["clipping_active"]:
        return "computed at each generation (the weights change before the generation is used up)"
    return "computed at each generation for vLLM's importance-sampling correction"


def _prompt_length_from_file(d: dict[str, Any]) -> bool:
    return d["inputs"].get("max_prompt_length", {}).get("source", "").startswith("file")


def prompt_text(prompts: list[dict[str, Any]], G: int) -> str:
    """[{position, copies, index}] -> '#1-#18 (x7 each), #19 (x2 of 7)'; dataset indices in brackets if known."""
    parts: list[str] = []
    full: list[dict[str, Any]] = []

    def flush() -> None:
        if full:
            first, last = full[0], full[-1]
            span = f"#{first['position'] + 1}" + (f"-#{last['position'] + 1}" if len(full) > 1 else "")
            indices = "" if first.get("index") is None else " [rows " + ", ".join(str(p["index"]) for p in full) + "]"
            parts.append(f"{span} (x{G}{' each' if len(full) > 1 else ''}){indices}")
            full.clear()

    for prompt in prompts:
        if prompt["copies"] == G and (not full or full[-1]["position"] + 1 == prompt["position"]):
            full.append(prompt)
            continue
        flush()
        if prompt["copies"] == G:
            full.append(prompt)
        else:
            index = "" if prompt.get("index") is None else f" [row {prompt['index']}]"
            parts.append(f"#{prompt['position'] + 1} (x{prompt['copies']} of {G}){index}")
    flush()
    return ", ".join(parts)


def _shown_ranks(count: int) -> list[int | None]:
    if count <= MAX_PROCESSES_SHOWN:
        return list(range(count))
    return [0, 1, 2, None, count - 1]


def _generation_lines(step: dict[str, Any], d: dict[str, Any]) -> list[str]:
    G, s = d["num_generations"], d["steps_per_generation"]
    b = d.get("completions_per_micro_batch") or d["per_device_train_batch_size"]
    processes = step["processes"]
    out = []
    for rank in _shown_ranks(len(processes)):
        if rank is None:
            out.append(f"      ... processes 3 to {len(processes) - 2} likewise")
            continue
        p = processes[rank]
        prompts = prompt_text(p["prompts"], G)
        word = "prompt" if len(p["prompts"]) == 1 else "prompts"
        out.append(f"      process {rank} gets sampler batch {p['sampler_batch']}: {word} {prompts}")
    rows = d["sampler_batch_size"]
    old = "; old log-probs are computed" if d["old_logprobs_needed"] else ""
    out.append(
        f"      each process generates and scores its {rows} completions; rewards are gathered so every group "
        f"is scored whole{old}."
    )
    out.append(
        f"      Each process shuffles its {rows} rows and cuts them into {s} slice{'s' if s > 1 else ''} of {b}."
    )
    return out


def _step_line(step: dict[str, Any], d: dict[str, Any]) -> str:
    s, mu = d["steps_per_generation"], d["num_iterations"]
    parts = [f"  micro-step {step['micro_step']}"]
    if step["generates"]:
        parts.append(f"generation {step['generation'] + 1}: GENERATE")
    else:
        first, last = step["processes"][0]["sampler_batch"], step["processes"][-1]["sampler_batch"]
        batches = f"batch {first}" if first == last else f"batches {first}-{last}"
        parts.append(f"skip sampler {batches} (copies of micro-step {step['copy_of']}'s)")
    train = f"train on slice {step['buffer_slice'] + 1} of {s}"
    parts.append(train + (f", pass {step['iteration']} of {mu}" if mu > 1 else ""))
    if step["optimizer_step"] is not None:
        parts.append(
            f"OPTIMIZER STEP {step['optimizer_step']} ({step['window']} micro-step"
            f"{'s' if step['window'] != 1 else ''} accumulated)"
        )
    return " | ".join(parts)


def walk_lines(document: dict[str, Any]) -> list[str]:
    d, schedule = document["derived"], document["schedule"]
    if not schedule:
        return []
    seed = d["inputs"]["seed"]["value"]
    shuffled = d["inputs"]["shuffle_dataset"]["value"]
    order = (
        f"the epoch's shuffled order (torch.randperm, generator seeded once with seed={seed})"
        if shuffled
        else "dataset order (shuffle_dataset is false)"
    )
    out = [f"Micro-step by micro-step (the first {len(schedule)}; prompts are numbered by position in {order})"]
    epoch = 0
    for step in schedule:
        if step["epoch"] != epoch:
            epoch = step["epoch"]
            again = "a new shuffle of the prompts" if shuffled else "the prompts in the same order again"
            out.append(f"  --- epoch {epoch + 1} begins: {again} ---")
        out.append(_step_line(step, d))
        if step["generates"]:
            out += _generation_lines(step, d)
    return out


def why_lines(d: dict[str, Any]) -> list[str]:
    if d.get("per_device_unit") == "prompts":
        b, G = d["per_device_train_batch_size"], d["num_generations"]
        return [
            "Why per_device_train_batch_size counts prompts here",
            f"  This release's dataloader hands each process {b} prompt{'s' if b != 1 else ''} per micro-step and "
            f"its trainer samples num_generations ({G}) completions of each: {b} x {G} = {b * G} completions per "
            "process per micro-step.",
            "  It has no repeating sampler and no steps_per_generation: every micro-step generates its own "
            "completions, and no divisibility by num_generations is checked (groups never straddle processes).",
        ]
    s, mu, b, every = (
        d["steps_per_generation"],
        d["num_iterations"],
        d["per_device_train_batch_size"],
        d["generate_every_micro_steps"],
    )
    ahead = "the next micro-step trains on" if s == 1 else f"the next {s} micro-steps train on"
    if every == 1:
        between = (
            "with one micro-step to a generation the trainer asks for a new batch each time, so there is "
            "no copy to ignore."
        )
    else:
        waits = "the micro-step" if every == 2 else f"each of the {every - 1} micro-steps"
        between = (
            f"the trainer still asks for a batch on {waits} before the next generation: the sampler serves "
            f"{'a copy' if every == 2 else 'copies'} of the same prompts and the trainer ignores "
            f"{'it' if every == 2 else 'them'}."
        )
    return [
        "Why steps_per_generation appears twice in the sampler",
        f"  In the dataloader's batch size (per_device_train_batch_size x steps_per_generation = {b} x {s} = {b * s}) "
        f"it fetches, in one batch, everything {ahead}, so it can be generated at once.",
        f"  In the sampler's repeat count (steps_per_generation x num_iterations = {s} x {mu} = {every}) it keeps the "
        f"dataloader in step with the trainer: {between}",
        "  The two cancel: every prompt of an epoch gets its num_generations completions generated exactly once.",
    ]


def relation_lines(document: dict[str, Any]) -> list[str]:
    """A refused geometry: the derivation as far as it goes, the relation that fails and the code that reports it."""
    out = ["The batch relations TRL checks (the one marked FAILS is why there is no schedule)"]
    for relation in document.get("relations", []):
        mark = "holds" if relation["holds"] else f"FAILS [{relation['code']}]"
        out.append(f"  {mark:<18} {relation['formula']}: {relation['says']}")
    return out if len(out) > 1 else []


def diagnostic_lines(document: dict[str, Any]) -> list[str]:
    shown = [d for d in document["diagnostics"] if d["severity"] != "info"]
    out = [
        f"  {d['severity']}[{d['code']}] {d['message']}" + (f"\n    help: {d['hint']}" if d["hint"] else "")
        for d in shown
    ]
    return ["Diagnostics (grpo validate shows them with their lines)"] + out if out else []


def render_explain(document: dict[str, Any], source: str = "") -> str:
    d = document["derived"]
    where = d.get("inputs", {}).get("world_size", {}).get("source", "default")
    from grpo_schema.render.text import release_reason

    judged = release_reason(document.get("trl_version", "1.16.0"), document.get("trl_version_source", "default"))
    blocks = [
        [f"grpo explain: {document['path']} at world size {document['world_size']} ({where}); judged as {judged}"]
    ]
    if "inputs" in d:
        blocks += [settings(d), consequences(d), walk_lines(document), why_lines(d)]
    else:
        blocks.append(relation_lines(document))
    if document["notes"]:
        blocks.append(["Notes"] + [f"  - {note}" for note in document["notes"]])
    sizes = document.get("valid_world_sizes")
    if sizes is not None:
        listed = ", ".join(map(str, sizes[:16])) + (", ..." if len(sizes) > 16 else "")
        blocks.append([f"Batch geometry valid at world sizes (1-64): {listed or 'none'}"])
    blocks.append(diagnostic_lines(document))
    return "\n\n".join("\n".join(block) for block in blocks if block) + "\n"
