"""Hypothesis strategies for hostile configs: every kind of key, every wrong type, any nesting, YAML and JSON text.

Keys are real field names, near-misses of them, unicode, empty or huge. Values cover every type a YAML or JSON
document can hold (huge integers, NaN and infinities included), nested at random. Documents are mappings rendered
as block YAML, flow YAML or JSON, or non-mappings, YAML fragments, mutated corpus files and random bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import strategies as st

from grpo_schema.engine.compiled import compiled
from grpo_schema.engine.profiles import known_profiles

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "grpo-corpus"
FIELDS = sorted(compiled("config").fields)
LAUNCH = sorted(compiled("launch").fields)
PROFILE_KEYS = sorted({key for profile in known_profiles().values() for key in profile.keys})
KNOWN = FIELDS + LAUNCH + PROFILE_KEYS + ["env", "datasets", "max_prompt_length"]
HUGE_INTS = [10**400, -(10**400), 2**63, 2**64 + 1, -(2**63) - 1, 10**4000]
FLOATS = [float("nan"), float("inf"), float("-inf"), 1e308, -0.0, 5e-324]
WORDS = [
    "yes",
    "no",
    "on",
    "off",
    "~",
    "null",
    "None",
    "1e-6",
    ".inf",
    "-.nan",
    "auto",
    "group",
    "0x10",
    "1_000",
    "1:30",
    "2001-12-14",
    "=",
    "'",
    '"',
    "\\",
    "accuracy_reward",
    "a.b:c",
    "../../etc/passwd",
    "$HOME",
]
YAML_PIECES = [
    "num_generations: ",
    "per_device_train_batch_size: ",
    "env:\n  ",
    "datasets:\n  - ",
    "- ",
    ": ",
    "? ",
    "&a ",
    "*a",
    "<<: *a\n",
    "!!binary ",
    "!!python/object:os.system ",
    "!tag ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\t",
    "\n",
    "  ",
    "'",
    '"',
    "#",
    "---\n",
    "...\n",
    "|\n",
    ">-\n",
    "%YAML 1.1\n",
    "%TAG ! x\n",
    "8",
    "-1",
    "1e400",
    ".nan",
    "\ufeff",
    "\u2028",
    "\x85",
    "\\u0000",
    "9" * 30,
]


def _corpus_texts() -> list[str]:
    files = sorted(CORPUS.glob("*/*.yaml")) if CORPUS.is_dir() else []
    return [f.read_text(encoding="utf-8") for f in files] or ["num_generations: 8\nlearning_rate: 1.0e-6\n"]


CORPUS_TEXTS = _corpus_texts()


def near_misses(name: str) -> st.SearchStrategy[str]:
    """A field name with one edit: a dropped, doubled or swapped character, another case, hyphens."""
    n = len(name)
    return st.one_of(
        st.integers(0, n - 1).map(lambda i: name[:i] + name[i + 1 :]),
        st.integers(0, n - 1).map(lambda i: name[:i] + name[i] + name[i:]),
        st.integers(0, max(n - 2, 0)).map(lambda i: name[:i] + name[i + 1 : i + 2] + name[i : i + 1] + name[i + 2 :]),
        st.just(name.upper()),
        st.just(name.replace("_", "-")),
        st.just(name + "s"),
        st.just(" " + name),
    )


text = st.text(st.characters(exclude_categories=["Cs"]), max_size=24)
keys = st.one_of(
    st.sampled_from(KNOWN),
    st.sampled_from(KNOWN).flatmap(near_misses),
    text,
    st.just(""),
    st.integers(1, 3).map(lambda k: "k" * (4000 * k)),
    st.sampled_from(["env.HF_HOME", "a[0]", "model.name", "<<"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.sampled_from(HUGE_INTS),
    st.floats(),
    st.sampled_from(FLOATS),
    text,
    st.sampled_from(WORDS),
    st.integers(1, 3).map(lambda k: "v" * (30_000 * k)),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=16,
)
env_sections = st.dictionaries(
    st.one_of(
        text,
        st.sampled_from(
            ["LD_PRELOAD", "PYTHONPATH", "HF_TOKEN", "PATH", "ld_preload", "MY_API_KEY", "CUDA_VISIBLE_DEVICES"]
        ),
    ),
    values,
    max_size=4,
)
mappings = st.dictionaries(keys, values, max_size=8) | st.builds(
    lambda m, env: {**m, "env": env}, st.dictionaries(keys, values, max_size=6), env_sections
)


def _yaml(mapping: object, flow: bool, unicode: bool) -> str:
    return yaml.safe_dump(mapping, default_flow_style=flow, allow_unicode=unicode, sort_keys=False)


def _mutate(source: str, position: float, cut: int, piece: str) -> str:
    at = int(position * len(source))
    return source[:at] + piece + source[at + cut :]


yaml_texts = st.builds(_yaml, mappings, st.booleans(), st.booleans())
json_texts = mappings.map(json.dumps)  # JSON is YAML; NaN/Infinity come out as words, huge ints as digits
non_mappings = st.one_of(values, st.just(None)).map(lambda v: _yaml(v, False, True))
fragments = st.lists(st.sampled_from(YAML_PIECES) | text, max_size=40).map("".join)
mutated_corpus = st.builds(
    _mutate, st.sampled_from(CORPUS_TEXTS), st.floats(0, 1), st.integers(0, 40), st.sampled_from(YAML_PIECES) | text
)
documents = st.one_of(yaml_texts, json_texts, non_mappings, fragments, mutated_corpus, st.just(""))
raw_inputs = st.one_of(documents, documents.map(str.encode), st.binary(max_size=512))
check_options = st.fixed_dictionaries(
    {}, optional={"world_size": st.none() | st.integers(1, 5000), "profiles": st.sampled_from([(), ("open-r1",)])}
)
