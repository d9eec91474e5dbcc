"""Shortcuts the check takes give the answers of what they replace.

CompiledModel.validate fills in the defaults itself (compiled.without_defaults) instead of pydantic-core: same
values, order, errors and notes as the whole schema validated by pydantic-core, which would stop holding if a field
validator started reading the other fields (ValidationInfo.data). The loader decodes bytes as "utf-8-sig" does.
"""

from __future__ import annotations

import codecs
import itertools
from pathlib import Path

import pytest
from pydantic_core import SchemaValidator, ValidationError

from grpo_schema.engine.compiled import MODELS, _cache, compiled
from grpo_schema.engine.loader import _decode, load_yaml

REPO = Path(__file__).resolve().parents[2]
SAMPLES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2.5,
    8.0,
    "8",
    "1e-6",
    "none",
    "null",
    "",
    "abc",
    [],
    [1],
    ["a"],
    {},
    {"a": 1},
    float("nan"),
    10**30,
    [{"path": "x"}],
]


def _outcome(validate, data):
    context: dict = {}
    try:
        values = validate(data, context)
    except ValidationError as exc:
        return "refused", exc.errors(include_url=False), repr(context)
    return "valid", repr(list(values.items())), [type(v) for v in values.values()], repr(context)


def _inputs(model) -> list[dict]:
    names = sorted(model.fields)
    examples = [load_yaml(p.read_bytes()).data for p in sorted((REPO / "examples").glob("*.yaml"))]
    found = [{k: v for k, v in e.items() if k in model.fields} for e in examples if isinstance(e, dict)]
    found += [{name: value} for name, value in itertools.product(names, SAMPLES)]
    return found + [{}, {"not_a_field": 1}, dict.fromkeys(names[:20], "x")]


@pytest.mark.parametrize("key", list(MODELS))
def test_defaults_filled_in_as_pydantic_core_fills_them(key):
    cache = _cache()
    if cache is None:
        pytest.skip("the compiled cache is stale: validators are built from the models")
    model = compiled(key)
    whole = SchemaValidator(cache[key]["schema"])
    for data in _inputs(model):
        assert _outcome(model.validate, data) == _outcome(lambda d, c: whole.validate_python(d, context=c), data), data


def test_decode_is_utf8_sig():
    bom = codecs.BOM_UTF8
    pieces = [b"", b"a", bom, b"\xc3\xa9", b"\xc3", b"\xff", b"\x80", "\U0001f600".encode(), b"\xef\xbb"]
    for parts in itertools.product(pieces, repeat=3):
        data = b"".join(parts)
        try:
            expected = ("text", data.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            expected = ("error", exc.reason, exc.start, exc.end, str(exc))
        try:
            got = ("text", _decode(data))
        except UnicodeDecodeError as exc:
            got = ("error", exc.reason, exc.start, exc.end, str(exc))
        assert got == expected, data
