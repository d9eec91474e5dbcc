"""One release's `trl grpo --config` surface: the dataclasses its script parses into, their fields merged as
HfArgumentParser merges them, and what its front end (cli.py / cli/) and script do with keys they do not know."""

from __future__ import annotations

import ast
import functools
from typing import Any

from trl_tables.fields import Module, class_chain, post_init_raises, read_class
from trl_tables.releases import basis
from trl_tables.wheels import read_sources, wheel

TRL_FILES = (
    "trl/trainer/grpo_config.py",
    "trl/trainer/base_config.py",
    "trl/trainer/model_config.py",
    "trl/scripts/utils.py",
    "trl/scripts/grpo.py",
)
TF_FILES = ("transformers/training_args.py", "transformers/trainer_utils.py", "transformers/debug_utils.py")


def front_end(sources: dict[str, str]) -> dict[str, Any]:
    grpo = sources["trl/scripts/grpo.py"]
    utils = sources["trl/scripts/utils.py"]
    tree = ast.parse(grpo)
    call = next(
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("parse_args_and_config")
    )
    kw = {k.arg: ast.unparse(k.value) for k in call.keywords}
    fails_by_default = "fail_with_unknown_args: bool = True" in utils
    if kw.get("return_remaining_strings") == "True" or kw.get("fail_with_unknown_args") == "False":
        script = "ignored"
    elif fails_by_default:
        script = "error"
    else:
        script = "ignored"
    if "trl/cli.py" in sources:
        cli = sources["trl/cli.py"]
        reads_config = "parse_args_and_config(return_remaining_strings=True)" in cli
        branch = cli.split('args.command == "grpo"', 1)[1].split("elif args.command", 1)[0]
        forwards = "launch_args" in branch
    else:  # trl/cli/ package (0.29 on)
        training = sources["trl/cli/commands/training.py"]
        reads_config = True
        forwards = "launch_args" in training and ("remaining_args" in training or "config_remaining" in training)
    if not reads_config:
        unknown = "no_config"
        message = "unrecognized arguments: --config (the front end parses argv before any config is read)"
    elif forwards:
        unknown = "accelerate"
        message = "accelerate launch: error: unrecognized arguments (keys accelerate launch knows are consumed)"
    elif script == "error":
        unknown = "error"
        message = "ValueError: Unknown arguments from config file: [...]"
    else:
        unknown = "ignored"
        message = ""
    dataclass_names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "dataclass_types" for t in node.targets):
            dataclass_names = [ast.unparse(e) for e in node.value.elts]  # type: ignore[attr-defined]
    if not dataclass_names:  # 0.14-0.21: make_parser builds the tuple inline
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple) and any(ast.unparse(e) == "GRPOConfig" for e in node.elts):
                dataclass_names = [ast.unparse(e) for e in node.elts]
                break
    return {
        "dataclasses": dataclass_names,
        "reads_config": reads_config,
        "script_unknown_keys": script,
        "unknown_keys": unknown,
        "unknown_keys_message": message,
    }


@functools.cache  # a pure function of the cached wheels: the trainer facts read each surface again
def surface(version: str, tf_version: str, offline: bool) -> dict[str, Any]:
    """One release's table: its parser's fields (with those of the transformers it is paired with) and front end."""
    trl_sources, trl_date = read_sources(wheel("trl", version, offline), TRL_FILES)
    tf_sources, tf_date = read_sources(wheel("transformers", tf_version, offline), TF_FILES)
    tf_sources = {k: v for k, v in tf_sources.items() if not k.startswith("trl/")}
    mod = Module({**tf_sources, **{k: v for k, v in trl_sources.items() if not k.startswith("trl/cli")}})
    fe = front_end(trl_sources)
    fields: dict[str, dict[str, Any]] = {}
    computed: dict[str, str] = {}
    for cls_name in fe["dataclasses"]:
        cls_fields, cls_computed = read_class(mod, cls_name)
        for name, entry in cls_fields.items():
            if name in fields:
                entry["duplicate_of"] = fields[name]["source"]
            fields[name] = entry
        computed.update(cls_computed)
    for name, expr in computed.items():
        if name in fields:
            fields[name]["post_init"] = expr
    grpo_classes = [c for c in class_chain(mod, "GRPOConfig") if c.name != "TrainingArguments"]
    fe["batch_divisibility_at_parse"] = any(post_init_raises(c, "divisible") for c in grpo_classes)
    return {
        "release": version,
        "transformers": tf_version,
        "transformers_basis": basis(version),
        "dates": {"trl": trl_date, "transformers": tf_date},
        "fields": dict(sorted(fields.items())),
        "front_end": fe,
    }
