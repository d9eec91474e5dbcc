"""check_verl_text: a verl launch script or YAML -> every diagnostic at once, in the engine's CheckResult.

The pipeline: read the runs (a script's launches, or the YAML's one config) -> for each run, sort its keys against
verl's field table (unknown, added, typed) -> the config with verl's defaults under it -> verl's rules on the values
that are known and well typed -> positions. Nothing raises on bad input; nothing looks at the local machine.
"""

from __future__ import annotations

import re
from dataclasses import replace

from grpo_schema.dialects.verl import codes
from grpo_schema.dialects.verl.config import VerlConfig, build
from grpo_schema.dialects.verl.fields import FieldTable, engine_base, release, releases, resolve, table
from grpo_schema.dialects.verl.launch import UNKNOWN, Run, entry_config, runs_in_script
from grpo_schema.dialects.verl.notes import script_notes, unknown_notes
from grpo_schema.dialects.verl.overrides import key_problem, override_value_problem
from grpo_schema.dialects.verl.rules import VerlContext, load_verl_rules
from grpo_schema.dialects.verl.yamlfile import read_yaml
from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.closematch import suggest
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.rules import run_rules

_LAUNCH_HINT = re.compile(r"(-m\s+[\w.]*main_\w+|main_ppo)")
_YAML_MARKERS = ("actor_rollout_ref", "algorithm", "trainer", "data")


def looks_like_verl(text: str) -> bool:
    """Whether a file is verl's dialect by its content: a verl launch, or YAML with verl's sections."""
    if _LAUNCH_HINT.search(text) and ("verl" in text or "actor_rollout_ref" in text):
        return True
    return bool(re.search(r"^actor_rollout_ref:\s*$", text, re.M)) and bool(
        re.search(r"^(algorithm|trainer|data):", text, re.M)
    )


def is_yaml(text: str, path: str) -> bool:
    if path.endswith((".yaml", ".yml")):
        return True
    if path.endswith(".sh"):
        return False
    return bool(re.search(r"^(actor_rollout_ref|defaults|run):", text, re.M)) and "python" not in text.split("\n")[0]


def read_runs(text: str, path: str) -> tuple[list[Run], list[Diagnostic]]:
    if is_yaml(text, path):
        runs, problems, _ = read_yaml(text)
        return runs, problems
    runs, script = runs_in_script(text)
    problems = [
        Diagnostic(
            codes.SHELL_SYNTAX,
            "error",
            p.message,
            line=p.line,
            column=p.column,
            hint="close it; the rest of the script is not read",
        )
        if p.severity == "error"
        else Diagnostic(codes.SCRIPT_NOTE, p.severity, p.message, line=p.line, column=p.column)
        for p in script.problems
    ]
    return runs, problems


_PIN = re.compile(r"\bverl\s*==\s*v?(\d+\.\d+(?:\.\d+)?)")
_COMMENT = re.compile(r"^\s*#\s*grpo:.*--verl-version[= ]\s*v?(\S+)", re.M)


def declared_release(text: str, flag: str | None = None) -> tuple[str, str, Diagnostic | None]:
    """The verl release a file is judged at and how it was declared: --verl-version (flag), a `# grpo:
    --verl-version X` comment, a pin in the file (`pip install verl==0.8.0`: requirements), else the newest
    release the dialect knows (default). A release with no table is said, and the newest judges it."""
    found = ((flag, "flag"),) if flag else ()
    comment, pin = _COMMENT.search(text), _PIN.search(text)
    found += ((comment.group(1), "comment"),) if comment else ()
    found += ((pin.group(1), "requirements"),) if pin else ()
    for declared, source in found[:1]:
        version = resolve(declared)
        if version is not None:
            return version, source, None
        line = text[: (comment or pin).start()].count("\n") + 1 if source != "flag" and (comment or pin) else 1
        return (
            release(),
            "default",
            Diagnostic(
                codes.SCRIPT_NOTE,
                "warning",
                f"verl {declared} ({source}) has no field table here; judged as verl {release()}",
                line=line,
                column=1,
                hint=f"the releases known: {', '.join(releases())}",
            ),
        )
    return release(), "default", None


def check_verl_text(text: str | bytes, path: str = "<string>", verl_version: str | None = None) -> CheckResult:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    version, source, unknown_release = declared_release(text, verl_version)
    runs, diagnostics = read_runs(text, path)
    diagnostics += [unknown_release] if unknown_release else []
    result = CheckResult(path=path, world_size=8, trl_version=version, trl_version_source="verl")
    result.sources["verl_version"] = source
    if not runs and not any(d.severity == "error" for d in diagnostics):
        diagnostics.append(
            Diagnostic(
                codes.NOT_A_LAUNCH,
                "error",
                "no launch of verl's trainer found",
                line=1,
                column=1,
                hint="a verl launch is `python3 -m verl.trainer.main_ppo "
                "key=value ...`; for a TRL config, validate without --dialect verl",
            )
        )
    for index, run in enumerate(runs):
        found, config = check_run(run, version)
        if index == 0 and config is not None and declared_gpus(config) is not None:
            result.world_size = declared_gpus(config) or 0
        diagnostics.extend(_labelled(found, index, run) if len(runs) > 1 else found)
    result.diagnostics = sorted(diagnostics, key=lambda d: (d.line or 0, d.column or 0))
    result.sources["world_size"] = "trainer.n_gpus_per_node x trainer.nnodes"
    return result


def declared_gpus(config: VerlConfig) -> int | None:
    """trainer.n_gpus_per_node x trainer.nnodes when both are known whole numbers."""
    per_node, nodes = config["trainer.n_gpus_per_node"], config["trainer.nnodes"]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (per_node, nodes)):
        return per_node * nodes
    return None


def _labelled(found: list[Diagnostic], index: int, run: Run) -> list[Diagnostic]:
    return [replace(d, message=f"run {index + 1} (line {run.line}): {d.message}") for d in found]


def base_table(run: Run, version: str | None = None) -> FieldTable:
    """The keys of the config the run composes at a release: its base config, or ppo_trainer with the model_engine
    it picks."""
    engine = run.last("model_engine")
    name = engine_base(engine.text, version) if engine is not None and engine.text else None
    if name is None and table(run.config_name, version).base != run.config_name.removesuffix(".yaml"):
        name = entry_config(run.entry)  # a recipe's own config (--config-path): judged as its entry's base
    return table(name or run.config_name, version)


def _engine_problem(run: Run, fields: FieldTable) -> Diagnostic | None:
    """model_engine picks a config group option (verl's model_engine/<name>.yaml); Hydra stops on one it lacks."""
    engine = run.last("model_engine")
    choices = fields.get("model_engine").choices if fields.get("model_engine") else ()
    if engine is None or not engine.known or not choices or engine.text in choices:
        return None
    suggestion = suggest(engine.text or "", frozenset(choices))
    return Diagnostic(
        codes.UNKNOWN_ENGINE,
        "error",
        f"model_engine={engine.text}: verl {fields.release} has no "
        f"model engine {engine.text!r} (it has {', '.join(choices)}); Hydra stops composing the config",
        line=engine.line,
        column=engine.column,
        fields=("model_engine",),
        hint=(f"did you mean {suggestion}? " if suggestion else "") + "a newer verl release, or a "
        "fork, may have it: check the release the script is for",
    )


def check_run(run: Run, version: str | None = None) -> tuple[list[Diagnostic], VerlConfig | None]:
    fields = base_table(run, version)
    found: list[Diagnostic] = list(script_notes(run, fields))
    engine = _engine_problem(run, fields)
    if engine is not None:
        found.append(engine)
    failed: set[str] = set()
    current = fields.defaults()
    for setting in run.settings:
        problem = key_problem(setting, fields, current) or override_value_problem(setting, fields)
        current[setting.key] = setting.value if setting.known else current.get(setting.key)
        if problem is not None:
            found.append(problem)
            if problem.severity == "error":
                failed.add(setting.key)
    config = build(run, fields)
    if run.entry.endswith("fully_async_main"):
        # the fully async trainer's step is async_training.require_batches mini-batches; data.train_batch_size
        # (0 in verl's own recipes) does not size it, so the rules that read it are left out
        config.values["data.train_batch_size"] = UNKNOWN
        config.unknown["data.train_batch_size"] = (
            "the fully async trainer sizes its step by async_training.require_batches x ppo_mini_batch_size"
        )
    failed |= set(config.unknown)
    found.extend(unknown_notes(config))
    rule_found = run_rules(config, VerlContext(), failed, rules=load_verl_rules())  # type: ignore[arg-type]
    found.extend(_place(d, config, run) for d in rule_found)
    return found, config


def _place(diagnostic: Diagnostic, config: VerlConfig, run: Run) -> Diagnostic:
    """A rule's diagnostic at the first of its fields the run writes, else at the launch."""
    for key in diagnostic.fields:
        setting = config.settings.get(key)
        if setting is not None:
            return diagnostic.with_position(setting.line, setting.column)
    return diagnostic.with_position(run.line, 1)


def results_by_run(
    text: str, path: str, verl_version: str | None = None
) -> list[tuple[Run, list[Diagnostic], VerlConfig | None]]:
    """Each run with its own diagnostics and config (grpo explain and convert read them one run at a time)."""
    runs, _ = read_runs(text, path)
    version, _, _ = declared_release(text, verl_version)
    return [(run, *check_run(run, version)) for run in runs]


__all__ = ["check_verl_text", "looks_like_verl", "results_by_run", "check_run", "read_runs"]
