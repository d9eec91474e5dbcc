"""Command-line overrides in TRL's own form: `--learning_rate 1e-5 --reward_funcs a b --no_shuffle_dataset`.

So that an existing `trl grpo --config F ...` command line carries over unchanged, values stay strings (the field
types convert them as TRL's argparse converters would), list fields take several values, a bare flag means true,
`--no_X` sets a field whose default is true to false, hyphens are read as underscores and a unique prefix of a
field name is accepted, as argparse does.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.engine.check_input import Override
from grpo_schema.engine.compiled import compiled


class OverrideError(ValueError):
    pass


def _facts(name: str) -> dict[str, Any]:
    return compiled("config").fields.get(name, {})


def _takes_list(name: str) -> bool:
    return "a list" in _facts(name).get("expected", "")


def _is_bool(name: str) -> bool:
    return "true or false" in _facts(name).get("expected", "")


def _resolve(option: str) -> tuple[str, bool]:
    """'--learning-rate' -> ('learning_rate', False); '--no_shuffle_dataset' -> ('shuffle_dataset', True)."""
    name = option.lstrip("-").replace("-", "_")
    fields = compiled("config").fields
    if name in fields:
        return name, False
    if name.startswith("no_") and fields.get(name[3:], {}).get("default") is True:
        return name[3:], True
    matches = [f for f in fields if f.startswith(name)]
    if len(matches) == 1:
        return matches[0], False
    return name, False  # unknown: reported by the validator like an unknown key


def parse_trl_args(args: list[str]) -> tuple[list[str], list[Override]]:
    """Split TRL-style tokens into config paths (`--config F`) and overrides."""
    paths: list[str] = []
    overrides: list[Override] = []
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--") or token == "--":
            raise OverrideError(f"unexpected argument {token!r}")
        option, _, inline = token.partition("=")
        values = [inline] if inline else []
        i += 1
        while not inline and i < len(args) and not args[i].startswith("--"):
            values.append(args[i])
            i += 1
        if option == "--config":
            paths.extend(values)
            continue
        name, negated = _resolve(option)
        overrides.append(Override(name, _value(name, negated, values, token), f"{token} {' '.join(values)}".strip()))
    return paths, overrides


def _value(name: str, negated: bool, values: list[str], token: str) -> Any:
    if negated:
        if values:
            raise OverrideError(f"{token} takes no value")
        return False
    if not values:
        if _is_bool(name):
            return True
        raise OverrideError(f"{token} needs a value")
    if _takes_list(name):
        return values
    if len(values) > 1:
        raise OverrideError(f"{token} takes one value, got {len(values)}: {' '.join(values)}")
    return values[0]
