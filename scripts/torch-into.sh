#!/usr/bin/env bash
# Put torch 2.13.0 (CPU build) into the environment $1, for the oracle environments (older TRL releases, verl).
#   TORCH_FROM=env   an environment that already has torch 2.13.0 (scripts/test.sh: the main .venv): $1 then reads
#                    that installation through a .pth file instead of unpacking its own copy (~1 GB and minutes per
#                    environment); pip in $1 sees it installed and adds only torch's small dependencies.
#   otherwise        pip installs it (resolved to the CPU build from the local wheel folder; never a CUDA one).
set -euo pipefail
env=$1
site() { "$1/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"; }
if [ -n "${TORCH_FROM:-}" ] && "$TORCH_FROM/bin/python" -c \
    "import importlib.metadata as m; assert m.version('torch').split('+')[0] == '2.13.0'" 2>/dev/null; then
  from_site=$(cd "$(site "$TORCH_FROM")" && pwd -P)
  link="$(dirname "$(cd "$TORCH_FROM" && pwd -P)")/.venv-torch-link"  # torch alone, not the rest of that site
  (  # environments built side by side make the folder once, under a lock
    flock 9
    if ! [ -e "$link/torch" ]; then
      mkdir -p "$link.new"
      for name in "$from_site"/torch "$from_site"/torchgen "$from_site"/functorch "$from_site"/torch-*.dist-info; do
        [ ! -e "$name" ] || ln -sfn "$name" "$link.new/$(basename "$name")"
      done
      rm -rf "$link" && mv "$link.new" "$link"
    fi
  ) 9>"$link.lock"
  echo "$link" > "$(site "$env")/zz_torch_link.pth"
  "$env/bin/python" -m pip install -q "torch==2.13.0"  # installs only what torch needs beside it
else
  "$env/bin/python" -m pip install -q "torch==2.13.0"
fi
"$env/bin/python" -c "import torch; assert '+cu' not in torch.__version__, torch.__version__"
