"""Run inside a .venv-trl/<release> interpreter: that release's own `trl grpo` parser on config files.

    python release_parser_child.py OUT.json CONFIG.yaml...

Writes {"release", "transformers", "parser_defaults": {key: default}, "files": {path: {"unknown": [...],
"verdict": "parses" | "error: ...", "parsed": {key: value}, "derived": {key: value}}}}: `parsed` holds the keys the
file (and the neutralising below) leaves out, `derived` what the GRPO config holds after parsing for the values
its __post_init__ computes or normalises (DERIVED), where the release has them. Machine-only settings are
neutralised first (use_cpu: true, report_to: none, no tf32), as the corpus README describes. Imports only what
that venv has.
"""

from __future__ import annotations

import contextlib
import enum
import importlib.metadata
import inspect
import io
import json
import os
import sys
import tempfile
import warnings

import yaml

# The values a release's GRPO config computes or normalises when parsed, compared with grpo's for that release.
DERIVED = (
    "generation_batch_size",
    "steps_per_generation",
    "loss_type",
    "beta",
    "scale_rewards",
    "temperature",
    "max_completion_length",
    "num_iterations",
    "epsilon",
    "epsilon_high",
    "top_k",
    "top_p",
    "vllm_mode",
    "gradient_checkpointing",
    "importance_sampling_level",
    "max_prompt_length",
    "num_generations",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "bf16",
    "learning_rate",
    "logging_steps",
)


def plain(value):
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "__dataclass_fields__"):
        return {k: plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return repr(value)


def main() -> int:
    out, files = sys.argv[1], sys.argv[2:]
    warnings.simplefilter("ignore")
    from trl.scripts import grpo

    source = inspect.getsource(grpo)
    call_kwargs = {}
    if "return_remaining_strings=True" in source.split("def make_parser", 1)[1]:
        call_kwargs["return_remaining_strings"] = True
    if "fail_with_unknown_args=False" in source:
        call_kwargs["fail_with_unknown_args"] = False

    def parser():
        params = inspect.signature(grpo.make_parser).parameters
        return grpo.make_parser(prog="trl grpo") if "prog" in params else grpo.make_parser()

    fresh = parser()
    defaults = {}
    for action in fresh._actions:  # the first action per key: a True bool's `--no_X` twin has default False
        if action.dest not in ("help", "config"):
            defaults.setdefault(action.dest, plain(action.default))
    result = {
        "release": importlib.metadata.version("trl"),
        "transformers": importlib.metadata.version("transformers"),
        "parser_defaults": defaults,
        "files": {},
    }
    # output_dir of a file that names none (nothing is written), where the release has a default for it: before
    # transformers 4.50 (TRL 0.14-0.15) the parser requires it, and a file without it stops there
    scratch = tempfile.mkdtemp(prefix="trl-oracle-")
    required = {action.dest for action in fresh._actions if action.required}
    for path in files:
        with open(path) as fh:
            config = yaml.safe_load(fh) or {}
        entry = {}
        keys = [k for k in config if k != "env"]
        remaining = parser().set_defaults_with_config(**{k: config[k] for k in keys})
        entry["unknown"] = sorted(s[2:] for s in remaining[::2])
        neutral = {k: v for k, v in config.items() if k not in ("tf32",)}
        neutral.update({"use_cpu": True, "report_to": "none"})
        if "output_dir" not in required:
            neutral.setdefault("output_dir", scratch)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as tmp:
            yaml.safe_dump(neutral, tmp)
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                parsed = parser().parse_args_and_config(["--config", tmp.name], **call_kwargs)
            if call_kwargs.get("return_remaining_strings"):
                parsed = parsed[:-1]
            values, derived = {}, {}
            for obj in parsed:
                if type(obj).__name__ == "GRPOConfig":
                    derived = {name: plain(getattr(obj, name)) for name in DERIVED if hasattr(obj, name)}
                for name in getattr(obj, "__dataclass_fields__", {}):
                    if name not in neutral:
                        try:
                            values[name] = plain(getattr(obj, name))
                        except Exception as exc:  # a property that needs a device
                            values[name] = f"<{type(exc).__name__}>"
            entry["verdict"] = "parses"
            entry["parsed"] = values
            entry["derived"] = derived
        except BaseException as exc:  # argparse exits; TRL raises ValueError; recipes may hit ZeroDivisionError
            said = (err.getvalue().strip().splitlines() or [""])[-1] if isinstance(exc, SystemExit) else str(exc)
            entry["verdict"] = f"error: {type(exc).__name__}: {said[:300]}"
        finally:
            os.unlink(tmp.name)
        result["files"][path] = entry
    with open(out, "w") as fh:
        json.dump(result, fh, sort_keys=True, indent=1, default=repr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
