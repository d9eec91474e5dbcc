"""The local executor (grpo_runtime.data.code_execution, code_programs): real programs in real subprocesses, each
limit met by a program that runs into it, and what a runaway program leaves behind: an outcome, never an exception
or a hang."""

import os
import shutil
import threading
import time

import pytest

from grpo_runtime.data.code_execution import Limits, run, sandbox_user
from grpo_runtime.data.code_programs import (
    CodeUnavailable,
    cpp_program,
    parallel_map,
    python_program,
    python_runs_as_sandbox_user,
    run_program,
    workspace,
)

SMALL = Limits(time_s=1.0, memory_mb=256.0, processes=8, output_bytes=1 << 16)
HAS_GXX = shutil.which("g++") is not None


def run_python(source: str, stdin: str = "", limits: Limits = SMALL):
    with workspace() as space:
        outcome, _ = run_program(space, python_program(space, source), stdin, limits)
    return outcome


def test_a_program_reads_stdin_and_writes_stdout():
    outcome = run_python("print(int(input()) * 2)", "21\n")
    assert (outcome.status, outcome.exit_code, outcome.stdout) == ("ok", 0, "42\n")


def test_a_program_past_its_time_is_killed_with_what_it_started():
    started = time.monotonic()
    outcome = run_python(
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\nwhile True: pass"
    )
    assert outcome.status == "timeout" and time.monotonic() - started < 10
    with pytest.raises(ProcessLookupError):  # its child went with it
        for _ in range(50):
            os.kill(int(outcome.stdout), 0)
            time.sleep(0.1)  # the kill is sent; a zombie is reaped by init
    assert run_python("import time; time.sleep(60)").status == "timeout"  # wall clock, not only CPU time


def test_memory_beyond_the_limit_fails_the_program():
    outcome = run_python("x = bytearray(1 << 30)\nprint('allocated')")
    assert outcome.status == "memory" and "allocated" not in outcome.stdout


def test_a_crash_is_an_outcome_and_leaves_no_core_file():
    outcome = run_python("import os; os.abort()")
    assert outcome.status == "crashed" and outcome.exit_code < 0
    limits = run_python(
        "import resource; print(resource.getrlimit(resource.RLIMIT_CORE), "
        "resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20)"
    )
    assert limits.stdout.split(")")[0] + ")" == "(0, 0)" and limits.stdout.split()[-1] == "256"


def test_endless_output_stops_at_the_cap():
    outcome = run_python("while True: print('x' * 1000)")
    assert outcome.status == "output_limit" and len(outcome.stdout) <= SMALL.output_bytes


def test_the_environment_is_built_from_nothing(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    outcome = run_python(
        "import os, sys\nprint(sorted(os.environ))\nprint(os.environ['HOME'] == os.getcwd())\nprint(hash('grpo'))"
    )
    names = eval(outcome.stdout.splitlines()[0])  # noqa: S307 - the program's own printed list
    assert "HF_TOKEN" not in names and "PYTHONPATH" not in names and "hf_secret" not in outcome.stdout
    assert outcome.stdout.splitlines()[1] == "True"  # HOME is its own scratch folder
    assert run_python("print(hash('grpo'))").stdout.splitlines() == outcome.stdout.splitlines()[2:]  # fixed seed


@pytest.mark.skipif(
    os.geteuid() == 0 and sandbox_user() is None,
    reason="root's processes are not capped and there is no nobody user to run them as",
)
def test_processes_are_capped():
    """A program that starts 40 processes gets `processes` (8) of them; the rest are refused by the kernel."""
    if HAS_GXX:
        with workspace() as space:
            program = cpp_program(space, {"fork.cpp": FORK_CPP}, ["-O2", "-o", "fork", "fork.cpp"], "fork")
            outcome, _ = run_program(space, program, "", SMALL)
    elif python_runs_as_sandbox_user():
        outcome = run_python(FORK_PY)
    else:
        pytest.skip("root, no g++, and nobody cannot start this interpreter")
    assert outcome.ok and int(outcome.stdout) <= SMALL.processes


FORK_CPP = (
    "#include <cstdio>\n#include <unistd.h>\nint main() {\n  int n = 0;\n  for (int i = 0; i < 40; i++) {\n"
    "    pid_t p = fork();\n    if (p == 0) { sleep(3); return 0; }\n    if (p < 0) break;\n    n++;\n  }\n"
    '  std::printf("%d\\n", n);\n}\n'
)
FORK_PY = (
    "import os, time\nn = 0\ntry:\n    for i in range(40):\n        if os.fork() == 0:\n"
    "            time.sleep(3)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)\n"
)


def test_a_program_that_cannot_start_is_an_error_outcome(tmp_path):
    (tmp_path / "work").mkdir()
    outcome = run([str(tmp_path / "no-such-program")], "", tmp_path / "work", SMALL)
    assert outcome.status == "error" and "no-such-program" in outcome.stderr


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_cpp_compiles_once_and_a_compile_error_is_said():
    with workspace() as space:
        program = cpp_program(
            space,
            {"a.cpp": '#include <cstdio>\nint main(){int x; std::scanf("%d", &x); std::printf("%d\\n", x + 1);}\n'},
            ["-o", "a", "a.cpp"],
            "a",
        )
        assert program.compile_error is None
        assert [run_program(space, program, f"{n}\n", SMALL)[0].stdout for n in (1, 2)] == ["2\n", "3\n"]
        broken = cpp_program(space, {"b.cpp": "int main( {"}, ["-o", "b", "b.cpp"], "b")
        assert broken.compile_error and "error" in broken.compile_error


def test_cpp_without_gxx_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with workspace() as space, pytest.raises(CodeUnavailable, match="g\\+\\+, which is not installed"):
        cpp_program(space, {"a.cpp": "int main(){}"}, ["-o", "a", "a.cpp"], "a")


def test_parallel_runs_are_bounded_and_kept_in_order():
    running, most, lock = [0], [0], threading.Lock()

    def work(n):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return n * n

    assert parallel_map(work, list(range(8)), 3) == [n * n for n in range(8)] and most[0] <= 3
