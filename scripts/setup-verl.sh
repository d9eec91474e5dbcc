#!/usr/bin/env bash
# The verl oracle environment (.venv-verl): verl 0.9.1 on the CPU build of torch, for the differential tests of the
# verl dialect (tests/verl, marker `verl_oracle`) and for scripts/verl_release.py, which writes the committed field
# table. verl never enters the main environment or the package's dependencies. Idempotent.
#   VERL_VENV=path   where it lives (default .venv-verl); the tests find it there or through GRPO_VERL_PYTHON.
#   (Its own variable: scripts/test.sh exports VENV for the main environment, which verl must never reach.)
# torch goes in first, pinned, so pip keeps the CPU build instead of resolving a CUDA one for verl.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VERL_VENV:-.venv-verl}
PY=${PYTHON:-python3}
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c \
    "import importlib.metadata as m; assert m.version('verl') == '0.9.1'" 2>/dev/null; then
  echo "$VENV: verl 0.9.1 already there"; exit 0
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
bash scripts/torch-into.sh "$VENV"
"$VENV/bin/python" -m pip install -q "verl==0.9.1" "torch==2.13.0"
"$VENV/bin/python" -c "import verl, hydra; print('verl', verl.__version__)"
