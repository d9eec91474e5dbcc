#!/usr/bin/env bash
# Set up grpo-config from nothing (idempotent) and start the validation service with its web form.
#   VENV=path   where the virtual environment lives (default .venv)
#   Any arguments go to `grpo serve` (default --host 127.0.0.1 --port 8000).
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV=${VENV:-.venv}
bash scripts/setup.sh all
exec "$VENV/bin/grpo" serve "$@"
