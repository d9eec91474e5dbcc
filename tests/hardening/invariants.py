"""What "a structured result" means, checked on every fuzzed input: the contract of interface.md §3.

`assert_structured` is the oracle of the property tests, the atheris harness and the regression tests: a
CheckResult whose diagnostics are well-formed values, renderable in every CLI format and as strict JSON.
`time_limit` turns a hang into a failure (the property tests bound the time of every example).
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import threading
from typing import Any, Iterator

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.codes import CODES
from grpo_schema.engine.diagnostics import SEVERITIES


class TooSlow(Exception):
    """An input took longer than its time limit: a hang, as far as the tests are concerned."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TooSlow in the main thread after `seconds` (SIGALRM); elsewhere, only run the body."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TooSlow(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def strict_json(text: str) -> Any:
    """Parse JSON the way a strict consumer does: NaN and Infinity are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def assert_diagnostic_shape(d: dict[str, Any]) -> None:
    assert d["code"] in CODES, d
    assert d["severity"] in SEVERITIES, d
    assert isinstance(d["message"], str) and d["message"].strip(), d
    assert isinstance(d["fields"], list) and all(isinstance(f, str) for f in d["fields"]), d
    for key in ("line", "column"):
        value = d[key]
        assert value is None or (type(value) is int and value >= 1), d
    assert isinstance(d["hint"], str), d
    assert d["fix"] is None or isinstance(d["fix"], dict), d


def assert_structured(result: Any) -> dict[str, Any]:
    """`result` is a CheckResult that serializes and renders; returns its dict."""
    assert isinstance(result, CheckResult), type(result)
    assert isinstance(result.valid, bool)
    assert type(result.world_size) is int and result.world_size >= 1
    out = result.to_dict()
    for d in out["diagnostics"]:
        assert_diagnostic_shape(d)
    assert_renders(result)
    return out


def assert_renders(result: CheckResult) -> None:
    """Every CLI output format of the result works; the JSON ones are strict JSON."""
    from grpo_schema.render.machine import render_github, render_json
    from grpo_schema.render.sarif import render_sarif
    from grpo_schema.render.text import render

    strict_json(render_json([result]))
    strict_json(render_sarif([result]))
    github = render_github([result])  # the runner splits workflow commands at \n and \r only (not at U+2028)
    assert "\r" not in github and all(line.startswith("::") for line in github.split("\n") if line), github
    text = render([result], {}, _NotATerminal())
    assert "\x1b" not in text, "escape sequences reached the terminal output"


def assert_explains(result: CheckResult) -> dict[str, Any]:
    """`grpo explain` / POST /api/v1/explain of the result: a document that is strict JSON once made finite."""
    from grpo_schema.commands.explain import explain_result

    document = explain_result(result)
    json.dumps(document, default=str)
    return document


def finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


class _NotATerminal:
    def isatty(self) -> bool:
        return False
