#!/usr/bin/env bash
# The environment in which tests/emit loads `grpo launch --emit` output with SkyPilot's and dstack's own loaders
# (they pin versions of uvicorn and click that the service does not use, so they live apart). Idempotent.
#   VENV=path   where it lives (default .venv-emit); the tests find it there or through GRPO_EMIT_PYTHON
set -euo pipefail
VENV=${VENV:-.venv-emit}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "skypilot>=0.10" "dstack>=0.19" "pyyaml>=6"
