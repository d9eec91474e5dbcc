#!/usr/bin/env bash
# Build virtual environments with real TRL releases under .venv-trl/<release>, for the test-only oracle
# (tests/versions/test_release_parsers.py, marker `trl_release`).
#
#   scripts/trl-release-venvs.sh                 # 0.16.1, 0.19.1, 0.23.1 and 1.8.0 (what scripts/test.sh builds)
#   scripts/trl-release-venvs.sh 0.16.1 1.8.0    # the named releases (0.16.1 0.19.1 0.23.1 0.29.1 1.8.0 1.16.0)
#
# TRL 1.16.0 needs no environment of its own: the oracle runs it from the main .venv (its test extra). Under
# CI=true the oracle fails, rather than skips, when one of the default releases here is missing: keep this default
# list and BUILT_BY_TEST_SH in tests/versions/test_release_parsers.py the same (a test checks it).
# torch 2.13.0 goes in first (pip resolves it to the CPU build from the local wheel folder; never a CUDA torch).
# Each release gets the transformers its table was read from (scripts/trl_releases.py RELEASES: the newest transformers
# uploaded before the TRL wheel), so that the oracle compares the release's parser with its table like with like.
# TRL up to 0.23 also imports and parses only with that transformers (with transformers 5.x their optional-import
# checks misfire and try to import vllm), with datasets < 5 and `requests` installed by hand.
# GRPO_TRL_VENVS=<folder> builds there instead of .venv-trl (tests/support/release_envs.py reads the same variable).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENVS=${GRPO_TRL_VENVS:-.venv-trl}
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(0.16.1 0.19.1 0.23.1 1.8.0)

pins_for() {
  case "$1" in
    0.16.1) echo "transformers==4.50.3 datasets<5 requests" ;;
    0.19.1) echo "transformers==4.53.1 datasets<5 requests" ;;
    0.23.1) echo "transformers==4.56.2 datasets<5 requests" ;;
    0.29.1) echo "transformers==5.3.0 requests" ;;  # the trainer oracle's step imports requests; TRL does not declare it
    1.8.0) echo "transformers==5.13.0 requests" ;;
    1.16.0) echo "transformers==5.23.0" ;;  # as the main .venv (its table's PROJECT_PINS); built only on request
    *) echo "unknown release $1 (known: 0.16.1 0.19.1 0.23.1 0.29.1 1.8.0 1.16.0)" >&2; return 1 ;;
  esac
}

build() {  # one release's environment; the releases build side by side (mostly downloads and unpacking)
  local release=$1 pins venv
  pins=$(pins_for "$release")
  venv="$VENVS/$release"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('trl') == '$release'" 2>/dev/null; then
    # shellcheck disable=SC2086
    [ -z "$pins" ] || "$venv/bin/python" -m pip install -q $pins  # a pin added since the environment was built
    echo "$venv: trl $release already there"; return 0
  fi
  echo "== $venv"
  "$PY" -m venv "$venv"
  bash scripts/torch-into.sh "$venv"  # its own copy, or the main environment's through a .pth (TORCH_FROM)
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q "trl==$release" "torch==2.13.0" $pins pyyaml
  "$venv/bin/python" -c "import torch, importlib.metadata as m; assert '+cu' not in torch.__version__, torch.__version__; print('trl', m.version('trl'), 'transformers', m.version('transformers'), 'torch', torch.__version__)"
}

for release in "${releases[@]}"; do pins_for "$release" >/dev/null; done  # an unknown release stops before any build
mkdir -p "$VENVS"
logs=$(mktemp -d)
pids=()
for release in "${releases[@]}"; do
  build "$release" >"$logs/$release.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!releases[@]}"; do
  wait "${pids[$i]}" || { failed=1; echo "error: $VENVS/${releases[$i]} could not be built:" >&2; }
  cat "$logs/${releases[$i]}.log"
done
rm -rf "$logs"
exit "$failed"
