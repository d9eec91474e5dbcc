"""A completion's code as a program for the local executor (grpo_runtime.data.code_execution): Python run by this
interpreter, C++ compiled once with g++ (a clear CodeUnavailable where g++ is not installed), each in a scratch
workspace that is removed afterwards, run on test inputs in folders of their own, `parallel` at a time."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grpo_runtime.data.code_execution import Limits, Outcome, run, sandbox_user

# Compiling is not what a test's limits are for: g++ on <bits/stdc++.h> takes seconds and a few hundred MB.
COMPILE_LIMITS = Limits(time_s=120.0, memory_mb=4096.0, processes=64, output_bytes=256 << 20)


class CodeUnavailable(RuntimeError):
    """This machine cannot run a language a reward needs (C++ without g++)."""


@dataclass(frozen=True)
class Program:
    argv: tuple[str, ...]  # how to run it (absolute paths)
    folder: Path  # its files
    as_sandbox_user: bool = True
    compile_error: str | None = None  # g++'s message when it did not compile


def gxx() -> str:
    found = shutil.which("g++")
    if found is None:
        raise CodeUnavailable(
            "C++ completions are compiled with g++, which is not installed on this machine "
            "(install it, e.g. `apt-get install g++`, or run the recipe where it is)"
        )
    return found


@functools.cache
def python_runs_as_sandbox_user() -> bool:
    """Whether the sandbox user (nobody, when this process is root) can start this interpreter (a pyenv under
    /root, for one, it cannot read): if not, Python programs run as this process's user, and root's processes are
    not capped."""
    if sandbox_user() is None:
        return True
    with workspace() as space:
        return run([sys.executable, "-c", "pass"], "", space.folder(), Limits(time_s=30.0)).ok


class Workspace:
    """A scratch folder for programs and their runs; folders the program's user may write."""

    def __init__(self, root: Path):
        self.root = root

    def folder(self) -> Path:
        made = Path(tempfile.mkdtemp(dir=self.root))
        os.chmod(made, 0o755)
        user = sandbox_user()
        if user is not None:
            os.chown(made, *user)
        return made

    def write(self, folder: Path, files: dict[str, str]) -> None:
        for name, content in files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            user = sandbox_user()
            if user is not None:  # a program may write beside its own files (graders/NAME, checker/checker)
                os.chown(path.parent, *user)


@contextmanager
def workspace():
    root = Path(tempfile.mkdtemp(prefix="grpo-code-"))
    os.chmod(root, 0o755)
    try:
        yield Workspace(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def python_program(space: Workspace, source: str, name: str = "main.py") -> Program:
    folder = space.folder()
    space.write(folder, {name: source})
    # isolated as -I is (no user site, no script folder on the path) but with the environment we build, whose
    # PYTHONHASHSEED keeps a program's set order the same from run to run
    return Program((sys.executable, "-s", "-P", "-B", str(folder / name)), folder, python_runs_as_sandbox_user())


def cpp_program(space: Workspace, files: dict[str, str], compile_args: list[str], binary: str) -> Program:
    """`files` written, then `g++ COMPILE_ARGS` run once in their folder; the program is `binary` there."""
    folder = space.folder()
    space.write(folder, files)
    compiled = run([gxx(), *compile_args], "", folder, COMPILE_LIMITS)
    error = None if compiled.ok else (compiled.stderr or compiled.stdout or compiled.status)[-4000:]
    return Program((str(folder / binary),), folder, True, error)


def run_program(
    space: Workspace,
    program: Program,
    stdin: str,
    limits: Limits,
    argv: tuple[str, ...] = (),
    files: dict[str, str] | None = None,
    keep: tuple[str, ...] = (),
) -> tuple[Outcome, dict[str, str]]:
    """Run `program` (with extra `argv`) in a fresh folder holding `files`; returns the outcome and the text of
    the files named in `keep` that it left there (a file it did not write is missing from the dict)."""
    folder = space.folder()
    try:
        space.write(folder, files or {})
        outcome = run([*program.argv, *argv], stdin, folder, limits, program.as_sandbox_user)
        kept = {}
        for name in keep:
            path = folder / name
            if path.is_file():
                kept[name] = path.read_bytes()[: limits.output_bytes].decode("utf-8", errors="replace")
        return outcome, kept
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def parallel_map(func, items: list, parallel: int) -> list:
    """`[func(item) for item in items]`, at most `parallel` at a time (each runs programs), in order."""
    if parallel <= 1 or len(items) <= 1:
        return [func(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(parallel, len(items))) as pool:
        return list(pool.map(func, items))
