"""Package discovery only; the project's metadata and dependencies are in pyproject.toml.

The service's source folder is web/, but it installs under a name of its own, `grpo_web`, so it never collides
with another distribution's top-level `web` module (web.py owns that name). The example recipes (examples/)
install inside it, where the form's "Start from" list reads them, and the committed JSON Schemas (schemas/) inside
grpo_schema.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["grpo_schema", "grpo_schema.*", "grpo_runtime", "grpo_runtime.*"]),
        "grpo_web",
        *(f"grpo_web.{name}" for name in find_packages(where="web")),
        "grpo_web.examples",
        "grpo_schema.schemas",
    ],
    package_dir={"grpo_web": "web", "grpo_web.examples": "examples", "grpo_schema.schemas": "schemas"},
)
