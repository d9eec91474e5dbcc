"""The cross-field errors JSON Schema can express, as `if`/`then` clauses of the exported schema.

Only rules that are errors in the Python validator and that need no arithmetic and no world size are here
(GRPO-B001 "generation batch is a multiple of num_generations" stays in Python). Each clause puts its error on a
key that is necessarily written in a violating file, with an `errorMessage` naming the rule's code, so an editor
underlines the right line. An `if` on `{"properties": {key: ...}}` without `required` also matches a file that
leaves the key out, which is right exactly when the test holds for the key's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from grpo_schema.engine.codes import CODES

JsonSchema = dict[str, Any]


def written(name: str, schema: JsonSchema) -> JsonSchema:
    """The key is in the file and its value matches `schema`."""
    return {"required": [name], "properties": {name: schema}}


def unless_written(name: str, schema: JsonSchema) -> JsonSchema:
    """The key is missing, or its value does not match `schema`."""
    return {"not": written(name, schema)}


def defaulted(name: str, schema: JsonSchema) -> JsonSchema:
    """The key is missing or matches `schema` (use only when the key's default matches it too)."""
    return {"properties": {name: schema}}


TRUE: JsonSchema = {"const": True}
NULL: JsonSchema = {"type": "null"}


def only_keys(names: Iterable[str]) -> JsonSchema:
    """A mapping (when the target is one) with no keys but these. (additionalProperties is the one key check the
    YAML language server words with our errorMessage; an empty `enum` for propertyNames breaks draft-07 there.)"""
    return {"properties": {name: {} for name in names}, "additionalProperties": False}


def all_but(*values: Any) -> JsonSchema:
    """Every allowed value of the target except these (the enum is filled in at export)."""
    return {"all_but": list(values)}


TRUTHY_DICT_OR_STR: JsonSchema = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "object", "minProperties": 1}]}


@dataclass(frozen=True)
class Conditional:
    code: str
    target: str  # the key the error is reported on; 'a.b' for key b of mapping a
    allowed: JsonSchema  # what the target may hold when `when` holds
    when: tuple[JsonSchema, ...] = ()

    def to_schema(self, choices: dict[str, list[Any]]) -> JsonSchema:
        """`choices`: key -> its allowed values, for an `allowed` written as all_but(...)."""
        allowed = dict(self.allowed)
        if "all_but" in allowed:  # `not` would do, but the YAML language server never shows a message for `not`
            excluded = allowed.pop("all_but")
            allowed["enum"] = [v for v in choices[self.target] if v not in excluded]
        # What the YAML language server shows when the const/enum/type check fails.
        allowed["errorMessage"] = f"{CODES[self.code].title} ({self.code})"
        then = allowed
        for name in reversed(self.target.split(".")):
            then = {"properties": {name: then}}
        if not self.when:
            return {"x-rule": self.code, **then}
        condition = self.when[0] if len(self.when) == 1 else {"allOf": list(self.when)}
        return {"x-rule": self.code, "if": condition, "then": then}


def _scheduler_kwargs() -> list[Conditional]:
    from grpo_schema.engine.rules.output import DROPS_KWARGS, SCHEDULER_KWARGS

    out = []
    for schedule, accepted in SCHEDULER_KWARGS.items():
        if accepted is None or schedule in DROPS_KWARGS:  # dropped with a warning (GRPO-O010), not refused
            continue
        when = (
            defaulted("lr_scheduler_type", {"const": schedule})
            if schedule == "linear"
            else written("lr_scheduler_type", {"const": schedule})
        )
        out.append(Conditional("GRPO-O006", "lr_scheduler_kwargs", only_keys(accepted), (when,)))
    return out


def conditionals() -> list[Conditional]:
    return [
        *_batch_memory_and_loss(),
        *_precision_distributed_and_output(),
        *_sampling_and_data(),
        *_scheduler_kwargs(),
    ]


def _batch_memory_and_loss() -> list[Conditional]:
    return [
        Conditional(
            "GRPO-B002", "steps_per_generation", NULL, (written("generation_batch_size", {"type": "integer"}),)
        ),
        Conditional("GRPO-B005", "auto_find_batch_size", {"const": False}),
        Conditional("GRPO-M001", "load_in_4bit", {"const": False}, (written("load_in_8bit", TRUE),)),
        Conditional("GRPO-M002", "load_in_4bit", {"const": False}, (unless_written("use_peft", TRUE),)),
        Conditional("GRPO-M002", "load_in_8bit", {"const": False}, (unless_written("use_peft", TRUE),)),
        Conditional("GRPO-M006", "liger_kernel_config.fused_linear_cross_entropy", {"const": False}),
        Conditional(
            "GRPO-L003", "max_completion_length", {"type": "integer"}, (written("loss_type", {"const": "dr_grpo"}),)
        ),
        Conditional("GRPO-L007", "sync_ref_model", {"const": False}, (defaulted("beta", {"const": 0}),)),
        Conditional(
            "GRPO-L008",
            "sync_ref_model",
            {"const": False},
            (written("use_peft", TRUE), written("beta", {"not": {"const": 0}})),
        ),
    ]


def _precision_distributed_and_output() -> list[Conditional]:
    from grpo_schema.engine.rules.distributed import ACCELERATOR_CONFIG_KEYS

    return [
        Conditional("GRPO-P001", "bf16", {"enum": [False, None]}, (written("fp16", TRUE),)),
        Conditional("GRPO-P002", "bf16_full_eval", {"const": False}, (written("fp16_full_eval", TRUE),)),
        Conditional("GRPO-W001", "fsdp", {"enum": [None, False, "", []]}, (written("deepspeed", TRUTHY_DICT_OR_STR),)),
        Conditional("GRPO-W003", "parallelism_config", NULL),
        Conditional("GRPO-W004", "accelerator_config", only_keys(ACCELERATOR_CONFIG_KEYS)),
        Conditional("GRPO-O001", "log_completions_hub_repo", NULL, (unless_written("log_completions", TRUE),)),
        Conditional(
            "GRPO-O004",
            "save_strategy",
            all_but("best"),
            (defaulted("metric_for_best_model", NULL), unless_written("load_best_model_at_end", TRUE)),
        ),
        Conditional(
            "GRPO-O005",
            "lr_scheduler_type",
            all_but("reduce_lr_on_plateau", "greedy"),
            (defaulted("eval_strategy", {"const": "no"}),),
        ),
        Conditional(
            "GRPO-O007", "dataloader_prefetch_factor", NULL, (defaulted("dataloader_num_workers", {"const": 0}),)
        ),
    ]


def _sampling_and_data() -> list[Conditional]:
    not_token_mode = defaulted("vllm_importance_sampling_mode", {"enum": ["sequence_truncate", "sequence_mask"]})
    return [
        Conditional(
            "GRPO-I002",
            "vllm_importance_sampling_mode",
            {"enum": ["token_mask", "sequence_mask"]},
            (
                defaulted("vllm_importance_sampling_correction", TRUE),
                defaulted("vllm_importance_sampling_clip_min", NULL),
                defaulted("vllm_importance_sampling_cap", NULL),
                written("vllm_importance_sampling_clip_max", NULL),
            ),
        ),
        Conditional(
            "GRPO-I003",
            "loss_type",
            all_but("vespo"),
            (written("use_vllm", TRUE), defaulted("vllm_importance_sampling_correction", TRUE), not_token_mode),
        ),
        Conditional(
            "GRPO-S004",
            "dataset_streaming",
            {"const": False},
            (defaulted("datasets", {"maxItems": 0}), defaulted("max_steps", {"maximum": 0})),
        ),
        Conditional(
            "GRPO-S004",
            "streaming",
            {"const": False},
            (written("datasets", {"minItems": 1}), defaulted("max_steps", {"maximum": 0})),
        ),
    ]


def conditional_schemas(choices: dict[str, list[Any]]) -> list[JsonSchema]:
    """The clauses for the schema's allOf; `choices` maps a key to its allowed values (for allowed_except)."""
    return [item.to_schema(choices) for item in conditionals()]
