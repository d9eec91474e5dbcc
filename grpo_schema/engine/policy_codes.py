"""The service policy's codes (area X: what a config posted over HTTP may not do before the service starts a run
with it), and where their diagnostics point: at the first field's key in the file, bounded as the validator's are."""

from __future__ import annotations

from dataclasses import replace

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.placing import bounded, path_of

X_REWARD_IMPORT = declare(
    "GRPO-X001",
    "error",
    "reward function imported by dotted path",
    "A dotted reward path makes every training process import and run that module. A service that starts runs "
    "for its clients refuses it unless the operator allows that path or all imports.",
)
X_ENV = declare(
    "GRPO-X002",
    "error",
    "env variable outside the service's allow-list",
    "A run started by the service gets only the `env:` variables its operator allows by name; any other "
    "variable could change what the training processes do.",
)
X_REMOTE_CODE = declare(
    "GRPO-X003",
    "error",
    "trust_remote_code in a service run",
    "trust_remote_code runs Python files that come with the model. The service refuses it unless the "
    "operator allows it.",
)
X_OUTSIDE = declare(
    "GRPO-X004",
    "error",
    "path outside the runs directory",
    "A service run writes only under the operator's runs directory: output_dir is resolved under it, and "
    "absolute paths, `..` and symlinks that lead out of it are refused unless the operator allows them. "
    "resume_from_checkpoint is held to the same rule because a checkpoint is unpickled.",
)
X_PROFILE = declare(
    "GRPO-X005",
    "error",
    "profile in a service run",
    "Service runs are trained by grpo_runtime, which reads TRL's keys only; a profile's script arguments would "
    "not be read, and a profile named by module path would import code into the service.",
)
X_PROCESSES = declare(
    "GRPO-X006",
    "error",
    "more processes than the service allows",
    "The service starts runs on its own machine with at most the number of processes its operator set.",
)
X_PUSH = declare(
    "GRPO-X009",
    "error",
    "push_to_hub in a service run",
    "A run that pushes uploads the model with the service's Hugging Face token (HF_TOKEN of the service's "
    "environment) to a repository named in the posted config. The service refuses it unless the operator allows "
    "pushing.",
)
X_BUSY = declare(
    "GRPO-X007",
    "error",
    "output_dir in use by another run",
    "Two runs writing the same output_dir would overwrite each other's checkpoints and metrics.",
)

X_NODES = declare(
    "GRPO-X008",
    "error",
    "world size that does not fill the service's Slurm nodes",
    "A service that submits runs to Slurm gives every node the same number of training processes, set by its "
    "operator: a run's world size must be a whole number of nodes (or fit on one), and at most the operator's "
    "number of nodes.",
)
X_MISSING_PATH = declare(
    "GRPO-X010",
    "error",
    "local model or dataset path that does not exist",
    "A model or dataset written as a local path (absolute, `./`, `../`, `~`, or the demo's `demo/model` and "
    "`demo/data`) is read from the service's folder. When nothing is there, the run would take the value for a "
    "Hub name and fail after minutes of retries; the service refuses it at launch and says how to make it.",
)


def placed(result: CheckResult, diag: Diagnostic) -> Diagnostic:
    """The diagnostic at its first field's key in the file (null for a JSON body or a key not in the file), its
    message and hint bounded as the validator's are (a refused value may be any size)."""
    for name in diag.fields:
        position = result.positions.of(path_of(name))
        if position:
            return bounded(replace(diag, line=position[0], column=position[1], origin="file"))
    return bounded(diag)
