#!/usr/bin/env bash
# Build the sdist and wheel, check them with twine, install the wheel (not the source tree) into a fresh venv beside
# web.py (which owns the top-level module `web`), and run every console command and the service from it.
#   $1   a work folder (default: a new temporary one); dist/ and the venv go there
#   PY   the Python that builds (default: python3; needs the `build` and `twine` packages)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${1:-$(mktemp -d)}
PY=${PY:-python3}
mkdir -p "$WORK"
step() { printf '\n== %s\n' "$*"; }

step "build sdist and wheel"
"$PY" -m build --sdist --wheel --outdir "$WORK/dist" "$REPO" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
"$PY" -m twine check --strict "$WORK"/dist/*
WHEEL=$(ls "$WORK"/dist/grpo_config-*.whl)
LISTING=$(unzip -l "$WHEEL")
for file in grpo_web/static/index.html grpo_web/examples/dapo.yaml grpo_schema/py.typed \
            grpo_schema/engine/compiled_models.json grpo_schema/schemas/grpo-config.schema.json; do
  [[ $LISTING == *"$file"* ]] || { echo "the wheel lacks $file" >&2; exit 1; }
done
if awk '{print $4}' <<<"$LISTING" | grep -q "^web/"; then echo "the wheel installs a top-level 'web'" >&2; exit 1; fi

step "install the wheel beside web.py in a fresh venv"
python3 -m venv "$WORK/venv"
V="$WORK/venv/bin"
"$V/python" -m pip install -q --upgrade pip
"$V/python" -m pip install -q "web.py" "${WHEEL}[web]"
"$V/python" -m pip check
cd "$WORK"  # away from the source tree: only the installed wheel can be imported
"$V/python" - <<'PY'
import importlib.metadata, sys
import web, grpo_web, grpo_schema
assert "site-packages" in web.__file__ and hasattr(web, "application"), web.__file__  # web.py's module, intact
assert grpo_web.__file__.startswith(sys.prefix), grpo_web.__file__
assert importlib.metadata.version("grpo-config") == grpo_schema.__version__
assert "torch" not in sys.modules
print("web.py and grpo_web import side by side;", "grpo-config", grpo_schema.__version__)
PY

step "console commands"
cat > run.yaml <<'YAML'
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
torch_dtype: bfloat16
per_device_train_batch_size: 4
num_generations: 4
YAML
"$V/grpo" validate run.yaml >/dev/null && { echo "validate should report the renamed key" >&2; exit 1; } || true
"$V/grpo" validate --set dtype=bfloat16 run.yaml >/dev/null 2>&1 || true
"$V/grpo" migrate --write run.yaml >/dev/null || true
"$V/grpo" validate run.yaml
"$V/grpo" explain run.yaml --format json | "$V/python" -c "import json,sys; assert json.load(sys.stdin)['derived']['generation_batch_size'] == 4"
"$V/grpo" schema --write schemas >/dev/null && test -s schemas/grpo-config.schema.json
"$V/grpo" codes GRPO-B001 | grep -q "num_generations"
"$V/python" -m grpo_schema validate run.yaml >/dev/null

step "the service from the wheel"
PORT=$("$V/python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
"$V/grpo" serve --port "$PORT" >serve.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
page() { curl -sf "$@" || { echo "request failed: $*" >&2; exit 1; }; }
[[ $(page "http://127.0.0.1:$PORT/healthz") == *'"ok"'* ]]
[[ $(page "http://127.0.0.1:$PORT/") == *"<html"* ]]
[[ $(page "http://127.0.0.1:$PORT/api/v1/presets/dapo") == *'"loss_type"'* ]]
[[ $(page -X POST "http://127.0.0.1:$PORT/api/v1/validate" -H 'content-type: application/yaml' \
      --data-binary @run.yaml) == *'"valid": true'* ]]
kill $SERVER; wait $SERVER 2>/dev/null || true; trap - EXIT

step "the trainer from the wheel: demo and dry run"
"$V/python" -m pip install -q "torch==2.13.0"
"$V/python" -m pip install -q "${WHEEL}[runtime]"
"$V/grpo" demo demo >/dev/null
"$V/grpo" train --dry-run demo/config.yaml
echo "wheel smoke test passed"
