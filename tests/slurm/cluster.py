"""A real one-node Slurm cluster for the tests: munged, slurmctld and slurmd from Debian's packages, with every
file (key, sockets, state, logs) in one temporary folder and ports of their own, so it never touches the
machine's /etc/slurm or /etc/munge and several clusters can run side by side.

The daemons run as root (slurmctld and slurmd need to start jobs as the submitting user); munged runs as the
munge user, as it insists. Jobs see SLURM_CONF, so srun inside a job finds the same cluster.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.env import free_port

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sacct", "srun")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin")


def missing_binaries() -> list[str]:
    path = os.pathsep.join([os.environ.get("PATH", ""), *SBIN])
    return [name for name in (*DAEMONS, *CLIENTS) if shutil.which(name, path=path) is None]


def why_unavailable() -> str | None:
    """None when a cluster can be started here, else the reason (for a skip)."""
    missing = missing_binaries()
    if missing:
        return (
            f"Slurm is not installed ({', '.join(missing)} missing): "
            "apt-get install slurmctld slurmd slurm-client munge"
        )
    if os.geteuid() != 0:
        return "starting slurmctld and slurmd needs root"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "the munge user does not exist (install the munge package)"
    return None


def _binary(name: str) -> str:
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN])) or name


SLURM_CONF = """\
ClusterName=grpotest
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Job credentials live 30 s (default 120): a requeued job waits that long before it starts again.
AuthInfo=socket={munge_socket},cred_expire=30
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={root}/jobcomp.txt
ReturnToService=2
KillWait=3
MinJobAge=600
InactiveLimit=0
SlurmdParameters=config_overrides
MessageTimeout=10
NodeName={host} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class Cluster:
    root: Path
    cpus: int = 2
    host: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    processes: list[subprocess.Popen] = field(default_factory=list)
    # munged (user munge) must reach its folder; pytest's temporary folders are private to root
    munge_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="grpo-test-munge-")))

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """What a client (sbatch, the service, a job) needs to reach this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def start(self) -> "Cluster":
        try:
            self._start()
        except BaseException:
            self.stop()  # a cluster that did not come up leaves no daemon behind
            raise
        return self

    def _start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for name in ("state", "spool"):
            (self.root / name).mkdir(exist_ok=True)
        self._start_munge()
        self.conf.write_text(
            SLURM_CONF.format(
                host=self.host,
                root=self.root,
                cpus=self.cpus,
                ctld_port=free_port(),
                slurmd_port=free_port(),
                munge_socket=self.munge_dir / "munge.socket",
            )
        )
        env = {**os.environ, **self.env}
        for daemon in ("slurmctld", "slurmd"):
            log = (self.root / f"{daemon}.out").open("wb")
            self.processes.append(
                subprocess.Popen(
                    [_binary(daemon), "-D", "-f", str(self.conf)], env=env, stdout=log, stderr=subprocess.STDOUT
                )
            )
        self._wait_idle()

    def _start_munge(self) -> None:
        munge = pwd.getpwnam("munge")
        folder = self.munge_dir
        key = folder / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        os.chmod(folder, 0o700)
        for path in (folder, key):
            os.chown(path, munge.pw_uid, munge.pw_gid)
        log = (self.root / "munged.out").open("wb")
        self.processes.append(
            subprocess.Popen(
                [
                    _binary("munged"),
                    "--foreground",
                    "--force",
                    f"--socket={folder / 'munge.socket'}",
                    f"--key-file={key}",
                    f"--pid-file={folder / 'munged.pid'}",
                    f"--log-file={folder / 'munged.log'}",
                    f"--seed-file={folder / 'munged.seed'}",
                ],
                user=munge.pw_uid,
                group=munge.pw_gid,
                extra_groups=[],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        deadline = time.monotonic() + 20
        while not (folder / "munge.socket").exists():
            if self.processes[-1].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"munged did not start: {self.logs()}")
            time.sleep(0.05)

    def _wait_idle(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{process.args[0]} exited with {process.returncode}: {self.logs()}")
            answer = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], env={**os.environ, **self.env}, capture_output=True, text=True
            )
            if answer.returncode == 0 and answer.stdout.strip() in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the Slurm node did not become idle in {timeout:.0f} s: {self.logs()}")

    def logs(self) -> str:
        parts = []
        for path in (
            self.root / "munged.out",
            self.munge_dir / "munged.log",
            *(self.root / name for name in ("slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log")),
        ):
            if path.exists():
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel every job, then stop the daemons (slurmd last but one, munged last)."""
        if self.conf.exists() and any(process.poll() is None for process in self.processes):
            subprocess.run(
                ["scancel", "--full", "--quiet", "--user", pwd.getpwuid(os.getuid()).pw_name],
                env={**os.environ, **self.env},
                capture_output=True,
                timeout=30,
            )
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
        shutil.rmtree(self.munge_dir, ignore_errors=True)
