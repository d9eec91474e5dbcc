"""The `env:` section: environment variables TRL sets before building anything.

TRL applies `env:` with `os.environ[key] = str(value)` in the launcher and in every worker, overwriting the
shell's values. That makes it a way to hijack the training processes (LD_PRELOAD, PYTHONPATH, PATH, ...) and a
place where secrets get committed (HF_TOKEN, WANDB_API_KEY, ...). Here values must be strings, names must be
valid, and both kinds of variable are refused unless the caller allows them by name. Validation never applies
the section; `grpo train` does, after validation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic, Fix, show_value

E_NOT_MAPPING = declare(
    "GRPO-E001",
    "error",
    "env is not a mapping",
    "`env:` maps variable names to string values; TRL refuses anything else.",
)
E_NOT_STRING = declare(
    "GRPO-E002",
    "error",
    "env value whose string form changes its meaning",
    "TRL sets every variable to str(value). Numbers and booleans survive that (1 -> '1', "
    "false -> 'False', which libraries read as false), but null becomes the string 'None' "
    "(not unset) and a list or mapping becomes its Python text. Write the string you mean.",
)
E_HIJACK = declare(
    "GRPO-E003",
    "error",
    "env variable can hijack the training processes",
    "Variables such as LD_PRELOAD, PYTHONPATH or PATH change which code every training process "
    "runs. They are refused unless explicitly allowed (`--allow-env NAME`).",
)
E_SECRET = declare(
    "GRPO-E004",
    "error",
    "secret in env",
    "Tokens, keys and passwords in a config file end up in version control and logs. Provide them "
    "from the environment of the job instead, or allow the name explicitly (`--allow-env NAME`).",
)
E_NAME = declare(
    "GRPO-E005",
    "error",
    "invalid variable name",
    "Environment variable names are letters, digits and underscores, not starting with a digit.",
)

HIJACK_NAMES = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONINSPECT",
        "PYTHONUSERBASE",
        "PYTHONEXECUTABLE",
        "PYTHONBREAKPOINT",
        "PYTHONWARNINGS",
        "PYTHONSAFEPATH",
        "PYTHONPLATLIBDIR",
        "BASH_ENV",
        "ENV",
        "SHELL",
        "IFS",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "HOME",
        "TMPDIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HF_ENDPOINT",
        # Load code from a directory or a command named by the variable: cached bytecode and compiled kernels, NCCL
        # plugins (dlopen), and the commands git (hub uploads) and webbrowser (logins) run.
        "PYTHONPYCACHEPREFIX",
        "TORCH_EXTENSIONS_DIR",
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
        "NCCL_NET_PLUGIN",
        "NCCL_TUNER_PLUGIN",
        "NCCL_PROFILER_PLUGIN",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "BROWSER",
    }
)
HIJACK_PREFIXES = ("LD_", "DYLD_", "GCONV_", "MALLOC_")
# A name holds a secret when one of its underscore-separated words (or word pairs) is one of these: HF_TOKEN,
# WANDB_API_KEY, AWS_SECRET_ACCESS_KEY are refused; TOKENIZERS_PARALLELISM is not.
SECRET_WORDS = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "APIKEY",
    "AUTH",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
)
SECRET_PATTERN = re.compile(r"(?:^|_)(?:" + "|".join(SECRET_WORDS) + r")(?:_|$)", re.IGNORECASE)
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class EnvCheck:
    values: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def is_hijack(name: str) -> bool:
    return name in HIJACK_NAMES or name.upper() in HIJACK_NAMES or name.upper().startswith(HIJACK_PREFIXES)


def is_secret(name: str) -> bool:
    return bool(SECRET_PATTERN.search(name))


def check_env(section: Any, allowed: frozenset[str] = frozenset()) -> EnvCheck:
    """Validate `env:`; only names that pass every check end up in `values`."""
    out = EnvCheck()
    if section is None:
        return out
    if not isinstance(section, dict):
        out.diagnostics.append(
            Diagnostic(
                E_NOT_MAPPING,
                "error",
                f"env must be a mapping of variable names to strings (got {show_value(section)})",
                fields=("env",),
                hint="write env: as NAME: 'value' lines",
            )
        )
        return out
    for name, value in section.items():
        problem = _problem(str(name), value, allowed)
        if problem is None:
            out.values[str(name)] = value if isinstance(value, str) else str(value)  # as TRL sets it
        else:
            out.diagnostics.append(problem)
    return out


def _problem(name: str, value: Any, allowed: frozenset[str]) -> Diagnostic | None:
    where = (f"env.{name}",)
    if not NAME_PATTERN.fullmatch(name):  # match() let 'PATH\n' through: '$' also matches before a final newline
        return Diagnostic(
            E_NAME,
            "error",
            f"{name!r} is not a valid environment variable name",
            fields=where,
            hint="use letters, digits and underscores",
        )
    if name not in allowed and is_hijack(name):
        return Diagnostic(
            E_HIJACK,
            "error",
            f"env sets {name}, which changes what code the training processes run",
            fields=where,
            hint=f"remove it, or allow it explicitly with --allow-env {name} if you trust this file",
            fix=Fix(unset=(f"env.{name}",), safe=False, title=f"remove env.{name}"),
        )
    if name not in allowed and is_secret(name):
        return Diagnostic(
            E_SECRET,
            "error",
            f"env sets {name}, which looks like a secret; secrets do not belong in config files",
            fields=where,
            hint=f"export {name} in the job's environment instead (or --allow-env {name})",
            fix=Fix(unset=(f"env.{name}",), safe=False, title=f"remove env.{name}"),
        )
    if not _survives_str(value):
        unset = value is None
        return Diagnostic(
            E_NOT_STRING,
            "error",
            f"env.{name} is {show_value(value)}, which TRL sets as the string "
            f"{str(value)!r}" + (" (the variable is not unset)" if unset else ""),
            fields=where,
            hint=f"remove env.{name} to leave it unset"
            if unset
            else f"write the string you mean, quoted: {name}: '...'",
            fix=Fix(unset=(f"env.{name}",), safe=False, title=f"remove env.{name}") if unset else None,
        )
    return None


def _survives_str(value: Any) -> bool:
    """Strings, numbers and booleans mean the same after TRL's str(value); null and containers do not."""
    return isinstance(value, (str, bool, int)) or (
        isinstance(value, float) and value == value and value not in (float("inf"), float("-inf"))
    )
