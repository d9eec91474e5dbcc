#!/usr/bin/env bash
# Set up grpo-config from nothing (idempotent) and start the validation service with its web form.
#   VENV=path   where the virtual environment lives (default .venv)
#   Any arguments go to `grpo serve` (default --host 127.0.0.1 --port 8000).
# Only the service is installed (the `web` extra: no torch), unless runs are turned on (--enable-runs or
# GRPO_WEB_RUNS=1): then the trainer the runs need is installed too (the `all` extra).
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV=${VENV:-.venv}
extras=web
case " $* " in *" --enable-runs "*) extras=all ;; esac
case "${GRPO_WEB_RUNS:-0}" in 1|true|yes|on) extras=all ;; esac
bash scripts/setup.sh "$extras"
exec "$VENV/bin/grpo" serve "$@"
