"""The reading and key codes of verl's dialect (its rules declare theirs with `@rule`): one codes table with TRL's."""

from __future__ import annotations

from grpo_schema.engine.codes import declare

NOT_A_LAUNCH = declare(
    "GRPO-Q001",
    "error",
    "not a verl launch",
    "The file is read as verl's dialect (by its content or --dialect verl) but holds no launch of "
    "verl's trainer (`python3 -m verl.trainer.main_ppo key=value ...`, or a recipe's main_* entry) "
    "and no verl YAML config.",
)
UNKNOWN_VALUE = declare(
    "GRPO-Q002",
    "info",
    "value the script does not determine",
    "The override's value comes from a variable the script does not set (the environment), a "
    "command substitution `$(...)`, or an assignment inside a branch, loop or function, none of "
    "which are run. The value is left unknown, never guessed, and the checks that read it are "
    "skipped. Set the variable in the script, or give its default with ${VAR:-default}.",
)
BAD_VALUE = declare(
    "GRPO-Q003",
    "error",
    "value of the wrong type",
    "verl's config declares the field's type (its config dataclass, or its default): this value is "
    "not one, and verl fails on it when it builds the config or computes with it.",
)
UNKNOWN_KEY = declare(
    "GRPO-Q004",
    "error",
    "key verl's config does not have",
    "verl composes its config with Hydra in struct mode: overriding a key the config lacks stops with "
    "`Could not override ... Key ... is not in struct` before anything runs. Fix the spelling, or "
    "add a new key on purpose with `+key=value`.",
)
APPEND_EXISTING = declare(
    "GRPO-Q005",
    "error",
    "`+key=` on a key verl already has",
    "`+key=value` adds a key; Hydra refuses it for a key the config already has (`Could not "
    "append to config. An item is already at ...`). Write `key=value` (or `++key=value`).",
)
ADDED_KEY = declare(
    "GRPO-Q006",
    "warning",
    "key added that verl does not read",
    "The key is not part of verl's trainer config; it is added (`+key=`, or a YAML file's own key), "
    "which Hydra allows, but verl's trainer does not read it. A recipe or a fork of verl may: check "
    "that the code launched is the one that reads it.",
)
UNREAD_WORD = declare(
    "GRPO-Q007",
    "warning",
    "part of the launch that is not read",
    "A word of the launch command is not an override the checker can read: an array or variable "
    "built inside a branch, an unknown expansion, or text that is not `key=value`. What it would set "
    "is not checked.",
)
SCRIPT_NOTE = declare(
    "GRPO-Q008",
    "info",
    "how the script was read",
    "Something of the script that affects what is checked: the launch passes the script's own "
    "arguments on (`$@`: overrides given when the script runs are not known), a variable's default "
    "was taken, a base config comes from a --config-path folder, or the launch sits in a branch.",
)
SHELL_SYNTAX = declare(
    "GRPO-Q009",
    "error",
    "script that cannot be read",
    "The script has a quote, bracket or expansion that is not closed, so where its words end is not known.",
)
DATACLASS_KEY = declare(
    "GRPO-Q021",
    "error",
    "key added to the actor's config dataclass",
    "`+key=` gets past Hydra, but verl's validate_config turns actor_rollout_ref.actor into a config "
    "dataclass before Ray starts, and the dataclass refuses a field it does not declare.",
)
WORKER_DATACLASS_KEY = declare(
    "GRPO-Q022",
    "error",
    "key added to a section a worker builds as a config dataclass",
    "`+key=` gets past Hydra and verl's parse-time checks, but the section (rollout, ref, "
    "reward, algorithm, ...) becomes a config dataclass when its worker builds it on the "
    "cluster, and the dataclass refuses a field it does not declare. A key of a fork of "
    "verl (Search-R1's rollout.n_agent, ...) needs that fork's code.",
)
BAD_OVERRIDE = declare(
    "GRPO-Q023",
    "error",
    "override Hydra cannot parse",
    "Every word after the entry point is a Hydra override (`key=value`, `+key=value`, `~key`) or a "
    "Hydra option; this one is neither, or its value's brackets or quotes do not close. Hydra stops "
    "on it before anything runs.",
)
UNKNOWN_ENGINE = declare(
    "GRPO-Q024",
    "error",
    "model engine the verl release does not have",
    "model_engine picks one of verl's model_engine config files (dp, megatron, ...); Hydra stops "
    "composing the config on a name the installed release does not ship, before anything runs. A "
    "newer release or a fork may have it.",
)
