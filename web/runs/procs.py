"""Process identity and signals, from /proc (Linux).

A pid alone does not name a process for long: after it exits the kernel may hand the number to another one.
A run's process is therefore recorded as (pid, start time in clock ticks since boot), and is "alive" only while
a process with that pid and that start time exists and is not a zombie. Where /proc is missing the start time is
unknown, and a run is never re-attached on that basis (it is marked failed instead).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may itself hold spaces and parentheses)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot."""
    found = _stat_fields(pid)
    return int(found[19]) if found else None


def alive(pid: int | None, started: int | None) -> bool:
    """Whether the process (pid, start time) still runs: same start time, not a zombie (state Z or X)."""
    if not pid or started is None:
        return False
    found = _stat_fields(pid)
    return bool(found) and found[0] not in ("Z", "X") and int(found[19]) == started


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (some launchers put workers in sessions of their own, out of the group)."""
    children: dict[int, list[int]] = {}
    for entry in PROC.glob("[0-9]*"):
        found = _stat_fields(int(entry.name))
        if found:
            children.setdefault(int(found[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def signal_run(pid: int, started: int | None, sig: signal.Signals) -> bool:
    """Send `sig` to the run's process group and every descendant, only while the leader is provably the run's
    process (so a reused pid is never signalled). Returns whether anything was signalled."""
    if not alive(pid, started):
        return False
    targets = descendants(pid)
    try:
        os.killpg(pid, sig)  # the run was started in a session of its own: pgid == pid
    except ProcessLookupError:
        pass
    for child in targets:
        try:
            os.kill(child, sig)
        except ProcessLookupError:
            pass
    return True
