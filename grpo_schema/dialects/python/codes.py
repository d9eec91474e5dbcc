"""The codes of GRPOConfig(...) calls read from Python: what a YAML file cannot have (syntax, values known only
at run time, keyword arguments built at run time, subclasses). Every finding about the config itself carries
the engine's own code, the same as the equivalent YAML gets."""

from __future__ import annotations

from grpo_schema.engine.codes import CODES, declare

if "GRPO-F001" not in CODES:  # declared once, however the module is reached
    UNREADABLE = declare(
        "GRPO-F001",
        "error",
        "Python file or notebook that cannot be read",
        "The script does not parse as Python, or the notebook is not a Jupyter notebook (not JSON, "
        "no cells) or is too large. Nothing in it is judged until it reads.",
    )
    NO_CALL = declare(
        "GRPO-F002",
        "info",
        "no GRPOConfig(...) call",
        "The file builds no GRPOConfig (from trl, Unsloth or an alias of either), so there is nothing "
        "to judge. A config parsed with HfArgumentParser(GRPOConfig) is read from the command line "
        "or a file at run time: check that file instead.",
    )
    NOT_STATIC = declare(
        "GRPO-F003",
        "info",
        "value that cannot be judged statically",
        "The keyword's value comes from the command line, a file, the environment, the hardware or "
        "a function called at run time. grpo-config never imports or runs the file, so it takes no "
        "value for it, not even the default: the rules that read it say they were not judged. "
        "Give the value as a literal or a module constant to have it checked, or export the call "
        "(grpo export) and fill it in.",
    )
    OPAQUE = declare(
        "GRPO-F004",
        "warning",
        "keyword arguments built at run time",
        "`**kwargs` built at run time (from argparse, a YAML or OmegaConf file, another module) or "
        "positional arguments past output_dir: any GRPOConfig argument may be set there, so the batch "
        "and the rules that depend on what is not seen are not judged.",
    )
    SUBCLASS = declare(
        "GRPO-F005",
        "warning",
        "GRPOConfig subclass defined in the file",
        "The file derives its own config class from GRPOConfig. Its extra fields, defaults and "
        "__post_init__ are code: its calls are not judged statically. Calls of GRPOConfig itself "
        "still are.",
    )
    DUPLICATE = declare(
        "GRPO-F006",
        "error",
        "keyword argument given twice",
        "The same GRPOConfig argument is given twice (as a keyword and in a `**` dict, or in two "
        "dicts): Python raises TypeError ('got multiple values for keyword argument').",
    )
    SCRIPT_ONLY = declare(
        "GRPO-F007",
        "error",
        "argument of the `trl grpo` script, not of GRPOConfig",
        "model_name_or_path, dataset_name, reward_funcs and the other ModelConfig and "
        "ScriptArguments keys are read by the `trl grpo` command from a YAML file; GRPOConfig(...) "
        "has no such argument and raises TypeError. In Python, the model, data and reward "
        "functions are given to GRPOTrainer.",
    )
    UNSLOTH_REWRITE = declare(
        "GRPO-F008",
        "info",
        "Unsloth's rewrite of the config",
        "UnslothGRPOConfig changes some values before TRL sees them. grpo-config applies the "
        "rewrite it knows (the batch) and says which others depend on Unsloth's version.",
    )
    NEWER_SYNTAX = declare(
        "GRPO-F009",
        "warning",
        "line of newer Python syntax left out",
        "The line does not parse with the Python grpo-config runs on (an f-string that reuses its "
        "quotes, which Python 3.12 allows). The line is left out and the rest of the file is read; "
        "a GRPOConfig call on that line is not seen.",
    )
    UNSLOTH_BATCH = declare(
        "GRPO-F010",
        "warning",
        "Unsloth replaces per_device_train_batch_size",
        "UnslothGRPOConfig sets per_device_train_batch_size to num_generations where the batch "
        "is not a multiple of it, and the release judged has no batch error of its own to carry "
        "the news (where it has, that finding keeps its code as a warning saying so). The run "
        "trains with the rewritten batch: explain and plan show it.",
    )
    WITH_DEFAULTS = declare(
        "GRPO-F011",
        "info",
        "call judged with the command line's defaults",
        "Values the call reads from the script's own argparse parser have defaults there: "
        "the call is judged once more with those defaults, and the finding says whether it "
        "would be valid when the script runs with no option for them. The run may pass other "
        "values, so the call's verdict stays the one made without guessing.",
    )
else:
    UNREADABLE, NO_CALL, NOT_STATIC, OPAQUE, SUBCLASS, DUPLICATE, SCRIPT_ONLY, UNSLOTH_REWRITE, NEWER_SYNTAX = (
        f"GRPO-F00{i}" for i in range(1, 10)
    )
    UNSLOTH_BATCH = "GRPO-F010"
    WITH_DEFAULTS = "GRPO-F011"
