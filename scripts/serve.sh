#!/usr/bin/env bash
# Set up grpo-config from nothing (idempotent) and start the validation service with its web form.
#   VENV=path   where the virtual environment lives (default .venv)
#   Any arguments go to `grpo serve` (default --host 127.0.0.1 --port 8000).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
if ! [ -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip
# The runtime (for launching runs from the form) needs torch; install the pinned CPU-capable build first so that
# no requirement pulls another one.
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q "torch==2.13.0"
"$PY" -m pip install -q -e ".[all]"
exec "$VENV/bin/grpo" serve "$@"
