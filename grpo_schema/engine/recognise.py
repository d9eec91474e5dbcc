"""Is this file a GRPO run config, or something else that sits beside one? Decided by what the file is.

A GRPO recipe folder also holds `accelerate` configs, SFT recipes and DeepSpeed JSON; a repository holds workflows
and compose files. Every surface asks here (`check_text` for the CLI, the service and the form's import; the
language server before it attaches), and the first that applies decides:

1. a top-level `# grpo:` comment line (grpo_schema.engine.infile.comment_lines: not in a block scalar, not under a
   nested key), or a `# yaml-language-server: $schema=` modeline naming a grpo schema (or `grpo serve`'s
   `/api/v1/schema`): a GRPO config;
2. a top-level key only a GRPO config has (GRPOConfig's own fields in any TRL release since 0.14, and the GRPO
   script's `reward_funcs`): a GRPO config, however many other keys it carries;
3. a modeline naming another schema: not a GRPO config;
4. the signature of another kind of file (an accelerate config's `compute_environment` / `distributed_type`, a
   DeepSpeed config's `zero_optimization`, an SFT config's `packing` / `max_length`, a workflow's `on` + `jobs`,
   ...): that kind, not a GRPO config;
5. otherwise nothing says either way (`kind` None): a surface that was asked to check the file checks it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.infile import COMMENT, comment_lines
from grpo_schema.engine.lines import split_lines

GRPO = "GRPO config"
_MODELINE = re.compile(r"^\s*#\s*yaml-language-server\s*:\s*\$schema\s*=\s*(?P<schema>\S+)")
# The schema endpoint of `grpo serve` (the modeline of a file the form hands over for download).
_SERVICE_SCHEMA = re.compile(r"/api/v1/schema(?:\?|$)")
_TOP_KEY = re.compile(r"""^(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<plain>[^\s#:'"\-?{\[][^:#]*?))\s*:(?:\s|$)""")
# The GRPO script's own arguments (TRL's GRPOScriptArguments): only a GRPO run names reward functions.
GRPO_SCRIPT_KEYS = frozenset({"reward_funcs", "reward_model_name_or_path"})
# GRPOConfig fields other TRL trainers' configs have too (SFTConfig's model_init_kwargs, ...): no sign of GRPO.
SHARED_WITH_OTHER_TRAINERS = frozenset({"model_init_kwargs", "pad_to_multiple_of", "disable_dropout"})


@dataclass(frozen=True)
class OtherKind:
    """A kind of file that is not a GRPO config, known by keys only it has at its top level."""

    name: str  # "an accelerate config", as the note says it
    any_of: frozenset[str]  # one of these is enough...
    all_of: frozenset[str] = frozenset()  # ...when these are there too


# Keys each kind has that a GRPO config never has at its top level (accelerate launch's own options, which a GRPO
# config may carry, are not among them: `num_processes`, `mixed_precision`, `machine_rank`).
OTHER_KINDS = (
    OtherKind(
        "an accelerate config",
        frozenset(
            {
                "compute_environment",
                "distributed_type",
                "main_training_function",
                "deepspeed_config",
                "fsdp_config",
                "megatron_lm_config",
            }
        ),
    ),
    OtherKind(
        "a DeepSpeed config",
        frozenset(
            {
                "zero_optimization",
                "train_micro_batch_size_per_gpu",
                "train_batch_size",
                "steps_per_print",
                "wall_clock_breakdown",
                "zero_allow_untested_optimizer",
            }
        ),
    ),
    OtherKind(
        "an SFT config",
        frozenset(
            {
                "packing",
                "packing_strategy",
                "eval_packing",
                "padding_free",
                "dataset_text_field",
                "dataset_kwargs",
                "completion_only_loss",
                "assistant_only_loss",
                "max_seq_length",
                "max_length",
                "eos_token",
                "pad_token",
                "dataset_num_proc",
            }
        ),
    ),
    OtherKind("a GitHub Actions workflow", frozenset({"jobs"}), frozenset({"on"})),
    OtherKind("a GitHub Action's metadata (action.yml)", frozenset({"runs"}), frozenset({"description"})),
    OtherKind("a Docker Compose file", frozenset({"services"})),
    OtherKind("a Kubernetes manifest", frozenset({"kind"}), frozenset({"apiVersion"})),
)


@dataclass(frozen=True)
class Recognition:
    kind: str | None  # GRPO, another kind's name, or None when nothing says either way
    evidence: tuple[str, ...] = ()  # the keys (or the comment) that decided, as written
    line: int | None = None  # 1-based line of the first of them

    @property
    def is_grpo(self) -> bool | None:
        return None if self.kind is None else self.kind == GRPO


@functools.lru_cache(maxsize=1)
def grpo_keys() -> frozenset[str]:
    """Keys only a GRPO config has: every release's GRPOConfig fields that are not TrainingArguments' own (nor
    another trainer's), read from the per-release tables, with the GRPO script's. Loaded on first need only."""
    from grpo_schema.versions.tables import releases, surface

    own: set[str] = set(GRPO_SCRIPT_KEYS)
    for release in releases():
        own.update(
            name for name, info in surface(release).fields.items() if info.source == "GRPOConfig" and not info.overrides
        )
    return frozenset(own - SHARED_WITH_OTHER_TRAINERS)


def top_level_keys(text: str) -> list[tuple[str, int]]:
    """(key, 1-based line) of the document's top-level keys: of a JSON object, else of YAML lines at column 0.
    A scan of lines, not a parse, so a file that is half-typed or not YAML at all is still recognised."""
    if text.lstrip().startswith("{"):
        return _json_keys(text)
    keys = []
    for number, line in enumerate(split_lines(text), start=1):
        if not line or line[0] in " \t#-" or line.startswith(("---", "...")):
            continue
        match = _TOP_KEY.match(line)
        if match:
            key = match["dq"] if match["dq"] is not None else match["sq"] if match["sq"] is not None else match["plain"]
            keys.append((key.strip(), number))
    return keys


def _json_keys(text: str) -> list[tuple[str, int]]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    lines = split_lines(text)
    return [(key, next((n for n, line in enumerate(lines, 1) if f'"{key}"' in line), 1)) for key in data]


def recognise(text: str | bytes) -> Recognition:
    """What the file is (module docstring): a GRPO config, another kind, or undecided (kind None)."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    said = _declared(text)
    if said is not None and said.is_grpo:
        return said
    keys = top_level_keys(text)
    grpo = [(k, n) for k, n in keys if k in grpo_keys()]
    if grpo:
        return Recognition(GRPO, tuple(k for k, _ in grpo), grpo[0][1])
    return said or _other_kind(keys) or Recognition(None)


def other_kind(text: str | bytes) -> Recognition | None:
    """The kind the file is when it is recognised as something other than a GRPO config, else None (a GRPO config,
    or undecided). A file with no other kind's signature (most configs) never loads the release tables."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    said = _declared(text)
    if said is not None and said.is_grpo:
        return None
    keys = top_level_keys(text)
    found = said or _other_kind(keys)
    if found is None or any(k in grpo_keys() for k, _ in keys):
        return None
    return found


def other_kind_of_keys(keys: Iterable[str]) -> Recognition | None:
    """other_kind for a mapping that came without text (a JSON body): its keys decide."""
    listed: list[tuple[str, int | None]] = [(k, None) for k in keys if isinstance(k, str)]
    found = _other_kind(listed)
    if found is None or any(k in grpo_keys() for k, _ in listed):
        return None
    return found


def _declared(text: str) -> Recognition | None:
    """What the file says of itself in its first top-level `# grpo:` line or yaml-language-server modeline. A
    modeline naming another schema yields to GRPO keys (the form's download names the service's URL; a user may
    name a schema of their own); a `# grpo:` line or a grpo schema is a GRPO config whatever the keys."""
    if "grpo:" not in text and "yaml-language-server" not in text:
        return None
    for number, line in comment_lines(text):
        if COMMENT.match(line):
            return Recognition(GRPO, ("# grpo:",), number)
        found = _MODELINE.match(line)
        if found:
            schema = found["schema"]
            ours = "grpo" in schema.lower() or _SERVICE_SCHEMA.search(schema) is not None
            return Recognition(GRPO if ours else f"a file for the schema {schema}", ("$schema",), number)
    return None


def _other_kind(keys: Sequence[tuple[str, int | None]]) -> Recognition | None:
    names = {k for k, _ in keys}
    for kind in OTHER_KINDS:
        if names & kind.any_of and kind.all_of <= names:
            evidence = [(k, n) for k, n in keys if k in kind.any_of or k in kind.all_of]
            return Recognition(kind.name, tuple(k for k, _ in evidence), evidence[0][1])
    return None


def not_a_grpo_config(found: Recognition) -> Diagnostic:
    """The one note a file recognised as another kind gets, instead of a GRPO check (GRPO-Y016)."""
    shown = ", ".join(found.evidence[:4]) + (", ..." if len(found.evidence) > 4 else "")
    return Diagnostic(
        codes.Y_NOT_GRPO,
        "info",
        f"not a GRPO config: {found.kind} ({shown}); it is not checked",
        fields=tuple(k for k in found.evidence if not k.startswith(("#", "$")))[:1],
        line=found.line,
        column=1 if found.line else None,
        hint="to check it as a GRPO config anyway, add a `# grpo:` comment line at its top",
    )
