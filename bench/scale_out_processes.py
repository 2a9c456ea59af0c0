"""The processes bench/scale_out.py starts, each standing in for a host: a PostgreSQL cluster
and a Redis server of its own (so restarting them disturbs nobody), gunicorn, Celery workers.

Each class starts, restarts and stops its process and knows its URL; nothing here measures.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wait_until(predicate, *, timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")


def stop_processes(
    processes: list[subprocess.Popen], timeout: float = 20, sig: int = signal.SIGTERM
) -> None:
    """Signal every process group at once, then SIGKILL what is left after ``timeout``."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        os.killpg(process.pid, sig)
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Postgres:
    """A throwaway cluster (initdb) on ``port``, run as the postgres user when we are root."""

    def __init__(self, folder: Path, *, port: int):
        self.folder, self.port = folder, port
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        pg_ctl = binaries[-1] if binaries else shutil.which("pg_ctl")
        if not pg_ctl:
            raise RuntimeError("PostgreSQL's pg_ctl was not found (apt-get install postgresql)")
        self.bin = Path(pg_ctl).parent
        self.data = folder / "data"

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run(
            [*prefix, *command], check=check, capture_output=True, text=True, timeout=120
        )

    def start(self) -> None:
        self.folder.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8")  # fmt: skip
        self._ctl("start")

    def _ctl(self, action: str, *extra: str) -> None:
        # fsync off: the restarts here are clean (-m fast), and the migrations' thousands of
        # commits would otherwise wait on a disk other helpers share. Production keeps fsync.
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                  "-o", options, "-w", "-t", "60", action, *extra)  # fmt: skip

    def restart(self) -> None:
        """A fast restart: open connections are cut, as on a server reboot or failover."""
        self._ctl("restart", "-m", "fast")

    def stop(self) -> None:
        if self.data.exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                      "stop", check=False)  # fmt: skip

    def create_database(self, name: str) -> None:
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                  "postgres", name)  # fmt: skip

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def version(self) -> str:
        return self._run(str(self.bin / "postgres"), "--version").stdout.strip()


class Redis:
    """redis-server with an append-only file, as a broker must be run to survive a restart."""

    def __init__(self, folder: Path, *, port: int):
        self.folder, self.port = folder, port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.folder), "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--logfile", str(self.folder / "log")],
            start_new_session=True,
        )  # fmt: skip
        wait_until(self._ping, timeout=30, what=f"redis-server on port {self.port} answering")

    def _ping(self) -> bool:
        reply = subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True, check=False
        )
        return reply.stdout.strip() == "PONG"

    def restart(self) -> None:
        """SIGTERM (the server writes its append-only file and exits), then start again."""
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.process is not None:
            stop_processes([self.process])
            self.process = None

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def version(self) -> str:
        return subprocess.run(
            ["redis-server", "--version"], capture_output=True, text=True, check=False
        ).stdout.split(" sha=")[0]


class Gunicorn:
    def __init__(self, folder: Path, *, port: int, env: dict[str, str]):
        self.folder, self.port, self.env = folder, port, env
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        import requests

        log = (self.folder / "gunicorn.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "acrb_web.wsgi", "-b", f"127.0.0.1:{self.port}",
             "--workers", "2", "--threads", "2"],
            cwd=ROOT, env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

        def answers() -> bool:
            try:
                return requests.get(f"{self.base_url}/accounts/login/", timeout=5).ok
            except requests.RequestException:
                return False

        wait_until(answers, timeout=90, what=f"gunicorn answering on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            stop_processes([self.process])


class Workers:
    """Solo Celery workers, each a process group, grouped by the queue they consume."""

    def __init__(self, folder: Path, *, env: dict[str, str]):
        self.folder, self.env = folder, env
        self.groups: dict[int, list[subprocess.Popen]] = {}
        self.logs: list[Path] = []

    def start_group(self, size: int, *, queue: str) -> None:
        for index in range(size):
            log_path = self.folder / f"worker-{queue}-{index}.log"
            self.logs.append(log_path)
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "acrb_web", "worker", "-Q", queue,
                 "-P", "solo", "-n", f"{queue}-{index}@%h", "--without-gossip",
                 "--without-mingle", "-l", "info"],
                cwd=ROOT, env={**os.environ, **self.env}, stdout=log_path.open("w"),
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            self.groups.setdefault(size, []).append(process)

    def wait_ready(self, timeout: float = 180) -> None:
        def all_ready() -> bool:
            return all(" ready." in path.read_text(errors="replace") for path in self.logs)

        wait_until(all_ready, timeout=timeout, what="every Celery worker ready", interval=0.5)

    def kill(self, group: int, index: int) -> None:
        """SIGKILL, as a host losing power would: no shutdown, no acknowledgement."""
        process = self.groups[group][index]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        """Cold shutdown (SIGQUIT): the benchmark is over, no task needs finishing."""
        stop_processes(
            [process for group in self.groups.values() for process in group], sig=signal.SIGQUIT
        )
