"""The driver of a run's Ray job (the entrypoint `grpo launch --ray` submits): place the run's accelerate machines
on the cluster with one placement group and run the launch command on each.

Every machine is one bundle of (processes per machine x the CPUs and GPUs of a process); the group is PACKed, so a
run that fits one node stays on it and a larger one spreads over as many nodes as it needs. Machine 0's node is the
rendezvous: its address, and a free port there unless the config names main_process_port. Each machine is an actor
in its bundle that runs the launch command with `--num_machines M --machine_rank R --main_process_ip IP
--main_process_port P` in a session of its own; its output is the actor's, which Ray copies into the job's log.
The first machine that fails stops the others and the job fails with its exit status; stopping the job (SIGTERM
from Ray) stops every machine. A group the cluster cannot place within --placement-timeout ends the job with what
it waited for, never a job that waits forever. A watcher beside each machine's processes ends them if the actor
dies without stopping them (its node lost, the driver killed). A config in the open-r1 layout brings one more
bundle, for the vLLM server: it starts first, the machines start once its /health/ answers (they get its address
as vllm_server_host), and it is stopped when they end; a server that exits stops them.

Ray is imported where it is used: the watcher (`--watch`) runs without it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from grpo_schema.engine.words import plural

EXIT_FAILED, EXIT_UNPLACED, EXIT_STOPPED = 4, 5, 143
STOP_GRACE_S = 10.0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m grpo_runtime.clusters.ray.driver")
    parser.add_argument("--machines", type=int, required=True, help="accelerate machines (bundles) of the run")
    parser.add_argument("--cpus", type=float, required=True, help="CPUs of one machine (its bundle)")
    parser.add_argument("--gpus", type=float, default=0.0, help="GPUs of one machine (its bundle)")
    parser.add_argument("--port", type=int, help="the rendezvous port (default: a free port on machine 0's node)")
    parser.add_argument("--placement-timeout", type=float, default=600.0)
    parser.add_argument(
        "--server-command",
        type=json.loads,
        default=None,
        help="the vLLM server's command (a JSON list), run in one more bundle before the machines",
    )
    parser.add_argument("--server-cpus", type=float, default=1.0)
    parser.add_argument("--server-gpus", type=float, default=0.0)
    parser.add_argument("--server-port", type=int, default=8000)
    parser.add_argument("--server-timeout", type=float, default=240.0, help="seconds to wait for its /health/")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the launch command of every machine")
    args = parser.parse_args(argv)
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.command:
        parser.error("no launch command after --")
    return args


def machine_flags(rank: int, machines: int, address: str, port: int) -> list[str]:
    if machines == 1:
        return []
    return [
        "--num_machines",
        str(machines),
        "--machine_rank",
        str(rank),
        "--main_process_ip",
        address,
        "--main_process_port",
        str(port),
    ]


def bundles(machines: int, cpus: float, gpus: float) -> list[dict[str, float]]:
    bundle = {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
    return [dict(bundle) for _ in range(machines)]


# --- the processes of one machine (Linux /proc) ------------------------------------------------------------------
def descendants(pid: int) -> list[int]:
    """Every process below `pid`: torchrun puts its workers in sessions of their own, out of the group."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        children.setdefault(int(text[text.rindex(")") + 2 :].split()[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end(pids: list[int], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM, then SIGKILL to whatever is left after `grace_s`."""
    signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
        time.sleep(0.2)
    signal_all(pids, signal.SIGKILL)


def watch(parent: int, child: int) -> int:
    """Beside a machine's processes, in a session of its own: while the actor (parent) lives, remember the
    processes below it; once it is gone, end the ones that are left."""
    known: list[int] = []
    while Path(f"/proc/{parent}").exists():
        if not Path(f"/proc/{child}").exists():
            return 0
        known = [child, *descendants(child)]
        time.sleep(1.0)
    end([pid for pid in known if Path(f"/proc/{pid}").exists()])
    return 0


class Machine:
    """One accelerate machine, an actor in its bundle (threaded: `stop` answers while `wait` blocks)."""

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None

    def address(self) -> tuple[str, int, str]:
        """This machine's node: its address, a free port on it, its Ray node id."""
        import ray

        with socket.socket() as sock:
            sock.bind(("", 0))
            return ray.util.get_node_ip_address(), sock.getsockname()[1], ray.get_runtime_context().get_node_id()

    def start(self, command: list[str]) -> int:
        sys.stdout.flush()
        self.child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grpo_runtime.clusters.ray.driver",
                "--watch",
                str(os.getpid()),
                str(self.child.pid),
            ],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        return self.child.pid

    def wait(self) -> int:
        return self.child.wait() if self.child else EXIT_FAILED

    def running(self) -> bool:
        return self.child is not None and self.child.poll() is None

    def stop(self) -> None:
        """SIGTERM now to every process of the machine, SIGKILL after the grace (in the background: the driver
        has seconds before Ray kills it; if the actor goes with it, the watcher finishes the job)."""
        if self.child and self.child.poll() is None:
            pids = [self.child.pid, *descendants(self.child.pid)]
            signal_all(pids, signal.SIGTERM)
            threading.Thread(target=end, args=(pids,), daemon=True).start()


def wanted(args: argparse.Namespace) -> list[dict[str, float]]:
    """Every bundle of the group: the machines', then the vLLM server's."""
    server = (
        [{"CPU": args.server_cpus, **({"GPU": args.server_gpus} if args.server_gpus else {})}]
        if args.server_command
        else []
    )
    return bundles(args.machines, args.cpus, args.gpus) + server


def place(args: argparse.Namespace):
    """The run's placement group once the cluster has placed it, or None after the timeout (removed again)."""
    from ray.util.placement_group import placement_group, remove_placement_group

    asked = wanted(args)
    group = placement_group(asked, strategy="PACK")
    print(
        f"[grpo-config] placing {plural(args.machines, 'machine')} of {asked[0]} each"
        + (f" and a vLLM server of {asked[-1]}" if args.server_command else "")
        + " (placement group, PACK)",
        flush=True,
    )
    if group.wait(timeout_seconds=args.placement_timeout):
        return group
    remove_placement_group(group)
    print(
        f"[grpo-config] error: the cluster did not place the bundles {asked} within {args.placement_timeout:g} s "
        "(its resources are taken, or a node left); nothing was started. Resubmit when they are free, or ask for "
        "fewer processes.",
        flush=True,
    )
    return None


def healthy(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


def serve(ray, server, args: argparse.Namespace, stopping: list[int]) -> str | None:
    """Start the vLLM server in its bundle and wait for its /health/; its node's address, or None (said why)."""
    address = ray.get(server.address.remote())[0]
    print(f"[grpo-config] vLLM server on {address}: {shlex.join(args.server_command)}", flush=True)
    ray.get(server.start.remote(args.server_command))
    url, deadline = f"http://{address}:{args.server_port}/health/", time.monotonic() + args.server_timeout
    while not stopping and time.monotonic() < deadline:
        if not ray.get(server.running.remote()):
            print("[grpo-config] error: the vLLM server exited before it answered (its log is above)", flush=True)
            return None
        if healthy(url):
            print(f"[grpo-config] vLLM server ready at {url}", flush=True)
            return address
        time.sleep(2)
    if not stopping:
        print(
            f"[grpo-config] error: the vLLM server did not answer {url} within {args.server_timeout:g} s "
            "(vllm_server_timeout)",
            flush=True,
        )
    return None


def follow(ray, machines: list, server, stopping: list[int]) -> int:
    """Wait for every machine (and watch the server): the first failure stops the others."""
    waiting = {m.wait.remote(): rank for rank, m in enumerate(machines)}
    if server is not None:
        waiting[server.wait.remote()] = "server"
    while any(rank != "server" for rank in waiting.values()) and not stopping:
        done, _ = ray.wait(list(waiting), num_returns=1, timeout=1.0)
        for ref in done:
            rank = waiting.pop(ref)
            try:
                code = ray.get(ref)
            except ray.exceptions.RayError as error:  # the actor died: its node was lost
                print(f"[grpo-config] machine {rank} was lost: {type(error).__name__}", flush=True)
                code = EXIT_FAILED
            if rank == "server":
                print(f"[grpo-config] the vLLM server exited with status {code}; stopping the machines", flush=True)
                code = code or EXIT_FAILED
            if code != 0:
                if rank != "server":
                    print(f"[grpo-config] machine {rank} exited with status {code}; stopping the others", flush=True)
                ray.get([m.stop.remote() for m in machines], timeout=60)
                return code
    return EXIT_STOPPED if stopping else 0


def drive(args: argparse.Namespace) -> int:
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")  # every machine's lines, not "[repeated 2x across cluster]"
    import ray
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    ray.init(log_to_driver=True)
    group = place(args)
    if group is None:
        return EXIT_UNPLACED
    actor = ray.remote(max_concurrency=3)(Machine)

    def in_bundle(index: int, cpus: float, gpus: float):
        return actor.options(
            num_cpus=cpus,
            num_gpus=gpus or None,
            scheduling_strategy=PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=index),
        ).remote()

    machines = [in_bundle(rank, args.cpus, args.gpus) for rank in range(args.machines)]
    server = in_bundle(args.machines, args.server_cpus, args.server_gpus) if args.server_command else None
    nodes = ray.get([m.address.remote() for m in machines])
    address, port = nodes[0][0], args.port or nodes[0][1]
    print(
        "[grpo-config] machines on nodes "
        + ", ".join(f"{rank}: {ip} ({node})" for rank, (ip, _, node) in enumerate(nodes))
        + f"; rendezvous {address}:{port}",
        flush=True,
    )
    stopping: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):  # Ray stops a job with SIGTERM, and SIGKILL 3 s later
        signal.signal(sig, lambda signum, _frame: stopping.append(signum))
    extra: list[str] = []
    if server is not None:
        host = serve(ray, server, args, stopping)
        if host is None:
            ray.get(server.stop.remote(), timeout=10)
            return EXIT_STOPPED if stopping else EXIT_FAILED
        extra = ["--set", f"vllm_server_host={host}", "--set", f"vllm_server_port={args.server_port}"]
    commands = [
        args.command + extra + machine_flags(rank, args.machines, address, port) for rank in range(args.machines)
    ]
    for rank, command in enumerate(commands):
        print(f"[grpo-config] machine {rank}: {shlex.join(command)}", flush=True)
    ray.get([m.start.remote(command) for m, command in zip(machines, commands)])
    code = follow(ray, machines, server, stopping)
    everything = machines + ([server] if server is not None else [])
    ray.get([m.stop.remote() for m in everything], timeout=2 if stopping else 60)
    if stopping:
        print("[grpo-config] stopped on request: every machine's processes were ended", flush=True)
    elif code == 0:
        finished = "the machine" if args.machines == 1 else f"all {args.machines} machines"
        print(f"[grpo-config] {finished} finished", flush=True)
    return code


def main(argv: list[str]) -> int:
    if argv[:1] == ["--watch"]:
        return watch(int(argv[1]), int(argv[2]))
    return drive(parse(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
