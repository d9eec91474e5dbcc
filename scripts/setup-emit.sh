#!/usr/bin/env bash
# The environment in which tests/emit loads `grpo launch --emit` output with each scheduler's own library:
# SkyPilot's task loader, dstack's configuration models, Kubeflow's PyTorchJob models (kubeflow-training) and the
# Kubeflow Trainer's TrainJob and JobSet models (kubeflow-trainer-api). They pin versions of uvicorn, click and the
# Kubernetes client that the service does not use, so they live apart. Idempotent.
#   EMIT_VENV=path   where it lives (default .venv-emit); the tests find it there or through GRPO_EMIT_PYTHON.
#   (Its own variable: scripts/test.sh exports VENV for the main environment.)
set -euo pipefail
VENV=${EMIT_VENV:-.venv-emit}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "skypilot>=0.10" "dstack>=0.19" "pyyaml>=6" \
  "kubeflow-training>=1.9" "kubeflow-trainer-api>=2.0"
