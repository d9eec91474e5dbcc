#!/usr/bin/env bash
# Create or update the project's virtual environment (idempotent); serve.sh and test.sh run it.
#   VENV=path   where the virtual environment lives (default .venv)
#   $1          the extras to install, e.g. "web", "all" or "all,test"
set -euo pipefail
VENV=${VENV:-.venv}
if ! [ -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip
case ",$1," in
  *,runtime,*|*,all,*|*,test,*)
    # The runtime needs torch: install the pinned build first, so that no requirement pulls another (multi-GB) one.
    "$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q "torch==2.13.0" ;;
esac
"$PY" -m pip install -q -e ".[$1]"
# DeepSpeed compiles its CPU communication op on first use; two processes compiling it at once can break the
# build, so it is built here once (a no-op when torch's extension cache holds it). Only with the deepspeed extra.
if "$PY" -c "import deepspeed" 2>/dev/null; then
  "$PY" -c "from grpo_runtime.distributed.accelerate import prebuild_deepspeed_ops; prebuild_deepspeed_ops(cpu_adam=True)" \
    || echo "warning: could not build DeepSpeed's CPU op; DeepSpeed runs on CPU processes will fail" >&2
fi
