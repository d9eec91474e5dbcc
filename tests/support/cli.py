"""The `grpo` command as the tests run it: in this process by default (milliseconds), or as a child process with
`subprocess=True` where the process itself is what a test is about (exit status, imports, start-up, signals)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess as _subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping


@dataclass
class Result:
    """What a run of `grpo` gave: the same fields as subprocess.CompletedProcess."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def grpo(
    *args: str,
    stdin: str | None = None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    subprocess: bool = False,
) -> Result:
    """Run `grpo ARGS`. In process: grpo_schema.cli.main with stdin, stdout and stderr replaced, `cwd` as the working
    directory and `env` added to os.environ for the call. As a process (`subprocess=True`): `python -m grpo_schema
    ARGS` with this interpreter, `env` added to this environment, killed after `timeout` seconds."""
    argv = [str(a) for a in args]
    if subprocess:
        full_env = None if env is None else {**os.environ, **env}
        done = _subprocess.run(
            [sys.executable, "-m", "grpo_schema", *argv],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=full_env,
            timeout=timeout,
        )
        return Result(argv, done.returncode, done.stdout, done.stderr)
    return _in_process(argv, stdin, cwd, env or {})


def _in_process(argv: list[str], stdin: str | None, cwd, env: Mapping[str, str]) -> Result:
    from grpo_schema.cli import main

    out, err = _text_stream(), _text_stream()
    with _environment(env), _working_directory(cwd), _standard_streams(stdin, out, err), _warnings_to_stderr():
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                print(exc.code, file=sys.stderr)
    return Result(argv, int(code or 0), _read(out), _read(err))


def _text_stream() -> io.TextIOWrapper:
    """A text stream with a .buffer, like a real stdout (some commands write bytes)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def _standard_streams(stdin: str | None, out, err):
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def _warnings_to_stderr():
    """Python's warnings on the command's stderr, once per place, as a `python -m grpo_schema` process shows them."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: sys.stderr.write(
            warnings.formatwarning(message, category, filename, lineno, line)
        )
        yield


@contextlib.contextmanager
def _working_directory(cwd):
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _environment(env: Mapping[str, str]):
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update({key: str(value) for key, value in env.items()})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
