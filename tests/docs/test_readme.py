"""Every command block of the README runs as written (tests/docs/readme.py says how blocks are read): in a fresh
work folder holding examples/, schemas/ and the files a block names, with the exit status it must end with and,
for blocks that show output, the first line they show found in what the command prints."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO
from tests.docs.readme import Block, read_blocks
from tests.support.env import free_port

README = REPO / "README.md"
FILES = Path(__file__).parent / "files"
BLOCKS = [block for block in read_blocks(README) if block.runnable]
TO_RUN = [block for block in BLOCKS if "not-run" not in block.options]


def block_id(block: Block) -> str:
    return f"line{block.line}-{block.language}"


def environment(work: Path) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def work_folder(tmp_path: Path, block: Block) -> Path:
    for name in ("examples", "schemas"):
        shutil.copytree(REPO / name, tmp_path / name)
    for name in filter(None, block.options.get("files", "").split(",")):
        source, _, target = name.partition(":")
        text = (FILES / source).read_text(encoding="utf-8").replace("{work}", str(tmp_path))
        destination = tmp_path / (target or source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    return tmp_path


class Service:
    """`grpo serve` in the background on a free loopback port, until stopped."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            ["grpo", "serve", *args, "--port", str(self.port)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
            if self.process.poll() is not None:
                break
        self.stop()
        raise AssertionError(f"grpo serve {' '.join(args)} did not answer /healthz")

    def stop(self) -> str:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        output, _ = self.process.communicate(timeout=60)
        return output.decode(errors="replace")


def run_command(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def run_serve_line(command: str, cwd: Path, env: dict[str, str]) -> None:
    args = command.split("#")[0].split()[2:]  # after `grpo serve`
    args = [arg for i, arg in enumerate(args) if arg != "--port" and (i == 0 or args[i - 1] != "--port")]
    Service(args, cwd, env).stop()


def run_runs_block(block: Block, cwd: Path, env: dict[str, str]) -> None:
    token = "readme-test-token"
    service = Service(["--enable-runs", "--runs-dir", str(cwd / "runs")], cwd, {**env, "GRPO_WEB_TOKEN": token})
    try:
        run_id = None
        for command in block.commands:
            command = command.replace("http://127.0.0.1:8000", service.url)
            if run_id:
                command = command.replace("/ID", f"/{run_id}")
            done = run_command(command, cwd, {**env, "TOKEN": token})
            assert done.returncode == 0, (command, done.stdout, done.stderr)
            if run_id is None:
                run_id = httpx.Response(200, content=done.stdout).json()["id"]
    finally:
        service.stop()


def run_serve_block(block: Block, cwd: Path, env: dict[str, str]) -> None:
    """A block that talks to `grpo serve`: a service on a free port stands in for http://127.0.0.1:8000."""
    service = Service([], cwd, env)
    try:
        for command in block.commands:
            done = run_command(command.replace("http://127.0.0.1:8000", service.url), cwd, env)
            assert done.returncode == 0, (command, done.stdout, done.stderr)
    finally:
        service.stop()


@pytest.mark.slow
@pytest.mark.parametrize("block", TO_RUN, ids=block_id)
def test_readme_block_runs_as_written(block, tmp_path):
    work = work_folder(tmp_path, block)
    env = environment(work)
    if "demo" in block.options:  # the block needs the demo's tiny model and prompts in ./demo
        assert run_command("grpo demo demo", work, env).returncode == 0
    if "runs" in block.options:
        return run_runs_block(block, work, env)
    if "serve" in block.options:
        return run_serve_block(block, work, env)
    if block.language == "python":
        done = subprocess.run(
            [sys.executable, "-c", block.commands[0]], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == block.expected_exit, done.stderr
        return None
    for command in block.commands:
        if command.lstrip().startswith("grpo serve"):
            run_serve_line(command, work, env)
            continue
        done = run_command(command, work, env)
        last = command == block.commands[-1]
        assert done.returncode == (block.expected_exit if last else 0), (command, done.stdout, done.stderr)
    if block.shown_output:
        printed = " ".join((done.stdout + done.stderr).split())
        assert " ".join(block.shown_output[0].split()) in printed, (block.shown_output[0], done.stdout)
    return None


def test_every_block_left_out_says_why_and_few_are():
    left_out = [block for block in BLOCKS if "not-run" in block.options]
    assert all(block.options["not-run"] for block in left_out)
    assert len(left_out) <= 4, [block.line for block in left_out]
    assert len(TO_RUN) >= 10
