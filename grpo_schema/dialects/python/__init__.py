"""GRPOConfig(...) in Python scripts (.py) and Jupyter notebooks (.ipynb), judged by the engine.

    from grpo_schema.dialects.python import check_python
    checked = check_python(open("train.py", "rb").read(), "train.py", trl_version="0.22.2")
    for result in checked.results:  # one CheckResult a GRPOConfig(...) call
        ...

The file is parsed with `ast` and never imported or run (source.py: notebooks cell by cell; calls.py: the calls
and their keyword arguments; values.py: literals, module constants and arithmetic on them; cli_defaults.py: the
defaults of the script's own argparse parser; check.py: the engine's judgement of each call, with what Python
changes; unsloth.py: what Unsloth's config class changes; export.py: the call as a flat YAML config).
"""

from grpo_schema.dialects.python.check import SUFFIXES, PythonCheck, check_python, is_python_path

__all__ = ["SUFFIXES", "PythonCheck", "check_python", "is_python_path"]
