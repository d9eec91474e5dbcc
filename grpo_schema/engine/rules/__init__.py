"""Cross-field rules: small named functions, each with a stable code, reading declared fields.

A rule is a generator over (config, context) that yields `Finding`s; the registry turns them into diagnostics
with the rule's code and severity. Each rule declares the fields it reads: a rule whose inputs failed field
validation is skipped (not crashed), and a rule that needs the batch plan is skipped when there is none.
The rule's docstring is the explanation `grpo codes CODE` prints.
"""

from __future__ import annotations

import importlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from grpo_schema.engine.codes import CODES, declare
from grpo_schema.engine.diagnostics import Diagnostic, Fix, Severity
from grpo_schema.engine.plan import RunPlan

MAX_FINDINGS_PER_RULE = 100


@dataclass(frozen=True)
class Finding:
    message: str
    fields: tuple[str, ...]
    hint: str = ""
    fix: Fix | None = None
    alternatives: tuple[Fix, ...] = ()


@dataclass
class RuleContext:
    """What rules may read besides the config: all declared, nothing probed from the local machine."""

    world_size: int
    plan: RunPlan | None
    explicit: frozenset[str]  # keys the user set (file or command line), under their TRL names
    reward_names: frozenset[str]  # names the active reward registry resolves
    # The TRL release the config is judged as, where it is not the engine's own 1.16 (its script's registry is
    # the built-in one): the diagnostics name it.
    trl_release: str | None = None
    allows_dotted_rewards: bool = True
    default_reward_funcs: tuple[str, ...] | None = None
    profile_names: tuple[str, ...] = ()
    launch: dict[str, Any] = field(default_factory=dict)
    # True when the file carries keys TRL's script does not read (unknown or another project's): it is likely
    # written for another training script. Severities never depend on it (same situation, same severity).
    foreign_script: bool = False
    # Known projects (profiles, not active) whose script arguments the file carries.
    foreign_profiles: tuple[str, ...] = ()
    # Every top-level key as written, including the ones TRL no longer reads (vllm_device, ...).
    written: frozenset[str] = frozenset()
    # The judged release's batch meaning (grpo_schema.versions' BatchMeaning), None for TRL 1.16's own.
    batch: Any = None
    # The keys the judged release reads (None: TRL 1.16's own tables).
    release_fields: frozenset[str] | None = None
    # The values the judged release's trainer accepts for its choice fields (None: TRL 1.16's own tables).
    release_choices: Mapping[str, tuple[str, ...]] | None = None

    def accepts(self, name: str, value: str) -> bool:
        """Whether the judged release takes `value` for the choice field `name` (every 1.16 value for 1.16)."""
        return self.release_choices is None or value in self.release_choices.get(name, (value,))

    @property
    def judged(self) -> str:
        """The release the messages speak of."""
        return self.trl_release or "1.16"


RuleFn = Callable[[Any, RuleContext], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    reads: tuple[str, ...]
    needs_plan: bool
    fn: RuleFn

    @property
    def name(self) -> str:
        return self.fn.__name__


RULES: list[Rule] = []
_AREAS = (
    "batch",
    "generation",
    "loss",
    "importance_sampling",
    "vllm",
    "rewards",
    "precision",
    "model",
    "output",
    "data",
    "distributed",
    "deprecated",
)


def rule(
    code: str, severity: Severity, reads: tuple[str, ...], needs_plan: bool = False, into: list[Rule] | None = None
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule. The first docstring line is the code's title, the rest its explanation. `into` is the list
    of another dialect's rules (verl's): same shape and codes table, run only on that dialect's configs."""

    def register(fn: RuleFn) -> RuleFn:
        doc = (fn.__doc__ or fn.__name__).strip().splitlines()
        declare(code, severity, doc[0].rstrip("."), " ".join(line.strip() for line in doc[1:]) or doc[0])
        (RULES if into is None else into).append(Rule(code, severity, reads, needs_plan, fn))
        return fn

    return register


_loaded: list[bool] = []


def load_rules() -> list[Rule]:
    if not _loaded:  # import each area once (its import registers its rules); import_module costs ~5 us a call
        for area in _AREAS:
            importlib.import_module(f"grpo_schema.engine.rules.{area}")
        _loaded.append(True)
    return RULES


def run_rules(config: Any, ctx: RuleContext, failed: set[str], rules: list[Rule] | None = None) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for item in load_rules() if rules is None else rules:
        if (failed and not failed.isdisjoint(item.reads)) or (item.needs_plan and ctx.plan is None):
            continue
        # A rule yields one finding per offending item, and a finding's fix may carry the whole list: 20,000
        # misspelled reward_funcs cost 460 s and 7 GB of JSON. Rules are generators, so stopping early also
        # stops their work.
        found = iter(item.fn(config, ctx))  # a generator (or any iterable a plugin rule returns)
        first = next(found, None)
        if first is None:  # most rules find nothing: skip building the islice and the list (~0.3 us a rule)
            continue
        findings = [first, *itertools.islice(found, MAX_FINDINGS_PER_RULE)]
        for finding in findings[:MAX_FINDINGS_PER_RULE]:
            out.append(
                Diagnostic(
                    item.code,
                    item.severity,
                    finding.message,
                    fields=finding.fields,
                    hint=finding.hint,
                    fix=finding.fix,
                    alternatives=finding.alternatives,
                )
            )
        if len(findings) > MAX_FINDINGS_PER_RULE:
            out.append(
                Diagnostic(
                    item.code,
                    item.severity,
                    f"more than {MAX_FINDINGS_PER_RULE} findings of this rule; only the first ones are listed",
                    fields=findings[-1].fields,
                    hint="fix the ones listed and validate again",
                )
            )
    return out


def explicitly_set(ctx: RuleContext, *names: str) -> bool:
    return not ctx.explicit.isdisjoint(names)  # any(name in ctx.explicit ...), without a generator


def has_or_have(names: list[str] | tuple[str, ...]) -> str:
    """Verb agreement for messages that list settings: 'lora_r has', 'lora_r, lora_alpha have'."""
    return "has" if len(names) == 1 else "have"


def names_phrase(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(names)


def describe_code(code: str) -> str:
    info = CODES[code]
    return f"{info.code} ({info.severity}): {info.title}\n\n{info.explanation}"


__all__ = [
    "Finding",
    "RuleContext",
    "Rule",
    "RULES",
    "rule",
    "load_rules",
    "run_rules",
    "explicitly_set",
    "describe_code",
    "has_or_have",
    "names_phrase",
]
