"""`python -m grpo_web.runs.wrapper RUN_DIR -- COMMAND...`: the leader of a run's process group.

The service starts this in a new session; it starts COMMAND (`grpo launch ...`) and records in RUN_DIR:
`process.json` (its own pid and start time, first thing) and `exit.json` (COMMAND's exit status, last thing),
each written atomically. The service reads them back when it restarts while the run goes on without it, so a
re-attached run still ends with its real exit code. Imports only the standard library and the two standard-library
modules beside it (procs, launcher).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from grpo_web.runs.launcher import EXIT_FILE, PROCESS_FILE
from grpo_web.runs.procs import start_time


def write_json(path: Path, value: dict) -> None:
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(value))
    os.replace(partial, path)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m grpo_web.runs.wrapper RUN_DIR -- COMMAND...", file=sys.stderr)
        return 2
    run_dir, command = Path(argv[0]), argv[2:]
    write_json(run_dir / PROCESS_FILE, {"pid": os.getpid(), "start_time": start_time(os.getpid())})
    # A cancel signals the whole group: COMMAND gets it too. Outlive COMMAND so its exit status is recorded.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    try:
        code = subprocess.call(command)
    except OSError as error:
        print(f"grpo_web.runs.wrapper: cannot start {command[0]}: {error}", file=sys.stderr, flush=True)
        code = 127
    write_json(run_dir / EXIT_FILE, {"exit_code": code, "finished_at": time.time()})
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
