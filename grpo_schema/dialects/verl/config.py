"""A verl config as the rules read it: the release's defaults under the run's settings, with the derived sizes.

Values are typed by the field table; a value the script does not determine is unknown, and the rules that read it
are skipped (said once, by the checker). Nothing here looks at the local machine: the GPUs are the declared
`trainer.n_gpus_per_node x trainer.nnodes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.dialects.verl.fields import FieldTable
from grpo_schema.dialects.verl.launch import UNKNOWN, Run, Setting

A = "actor_rollout_ref.actor."
R = "actor_rollout_ref.rollout."
REF = "actor_rollout_ref.ref."
# Advantage estimators that compare the samples of one prompt with each other: a group of one has no baseline.
GROUP_ESTIMATORS = frozenset(
    {
        "grpo",
        "grpo_passk",
        "grpo_vectorized",
        "rloo",
        "rloo_vectorized",
        "opo",
        "gpg",
        "gdpo",
        "reinforce_plus_plus_baseline",
    }
)


@dataclass
class VerlConfig:
    table: FieldTable
    values: dict[str, Any]
    settings: dict[str, Setting] = field(default_factory=dict)  # the last setting of each key written
    unknown: dict[str, str] = field(default_factory=dict)  # key -> why its value is not known

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key)

    def written(self, key: str) -> bool:
        return key in self.settings

    # --- the sizes verl derives ---------------------------------------------------------------------------------
    @property
    def n_gpus(self) -> int:
        return int(self["trainer.n_gpus_per_node"]) * int(self["trainer.nnodes"])

    @property
    def megatron(self) -> bool:
        return self[A + "strategy"] == "megatron"

    @property
    def model_parallel(self) -> int:
        """Megatron's TP x PP x CP (1 under FSDP)."""
        if not self.megatron:
            return 1
        return (
            int(self[A + "megatron.tensor_model_parallel_size"] or 1)
            * int(self[A + "megatron.pipeline_model_parallel_size"] or 1)
            * int(self[A + "megatron.context_parallel_size"] or 1)
        )

    @property
    def sequence_parallel(self) -> int:
        """Ulysses SP under FSDP: the engine's, or the deprecated actor-level one when it is larger."""
        if self.megatron:
            return 1
        return max(
            int(self[A + "fsdp_config.ulysses_sequence_parallel_size"] or 1),
            int(self[A + "ulysses_sequence_parallel_size"] or 1),
        )

    @property
    def dp(self) -> int:
        """The actor's data-parallel size W: the GPUs over the model- or sequence-parallel group."""
        return self.n_gpus // (self.model_parallel * self.sequence_parallel)

    @property
    def rollout_group(self) -> int:
        return (
            int(self[R + "tensor_model_parallel_size"] or 1)
            * int(self[R + "data_parallel_size"] or 1)
            * int(self[R + "pipeline_model_parallel_size"] or 1)
        )

    @property
    def dynamic(self) -> bool:
        return bool(self[A + "use_dynamic_bsz"])

    @property
    def n(self) -> int:
        return int(self[R + "n"])


def build(run: Run, table: FieldTable) -> VerlConfig:
    """The release's defaults with the run's known settings on top (unknown ones recorded, never guessed)."""
    config = VerlConfig(table, table.defaults())
    for setting in run.settings:
        if setting.op == "~":
            config.values.pop(setting.key, None)
            continue
        config.settings[setting.key] = setting
        if setting.known:
            config.values[setting.key] = setting.value
            config.unknown.pop(setting.key, None)
        else:
            config.values[setting.key] = UNKNOWN
            config.unknown[setting.key] = setting.why
    _follow(config)
    return config


def _follow(config: VerlConfig) -> None:
    """Keys that follow another (Hydra interpolations) take its value as the run sets it, unless set themselves."""
    for field_ in config.table.fields.values():
        if field_.follows is None or field_.key in config.settings:
            continue
        source, seen = field_.follows, {field_.key}
        while source not in config.settings and source not in seen:
            seen.add(source)
            nxt = config.table.get(source)
            if nxt is None or nxt.follows is None:
                break
            source = nxt.follows
        if source in config.values:
            config.values[field_.key] = config.values[source]
            if source in config.unknown:
                config.unknown[field_.key] = config.unknown[source]
