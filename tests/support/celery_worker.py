"""Real Celery worker processes for tests (not eager mode), run against the test database.

A worker is a separate process: it reaches the test database through DATABASE_URL (the SQLite
test database is a file for this reason, see settings) and the broker the tests use.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from acrb_web.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]


def worker_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] or "postgres"
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def wait_for(predicate, timeout: float = 120, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


class Workers:
    """Start `celery worker` processes on one queue; the first start purges the queue.

    ``stop_all`` ends every process group (the tests' fixtures call it on teardown).
    """

    def __init__(self, log_folder: Path, *, queue: str, app: str = "acrb_web", pool: str = "solo"):
        self.log_folder, self.queue, self.pool = log_folder, queue, pool
        self.command = [sys.executable, "-m", "celery", "-A", app]
        self.started: list[tuple[subprocess.Popen, object]] = []

    def environment(self, **extra: str) -> dict[str, str]:
        return dict(
            os.environ,
            DATABASE_URL=worker_database_url(),
            ACRB_MEDIA_ROOT=str(settings.MEDIA_ROOT),
            CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
            CELERY_TASK_ALWAYS_EAGER="0",
            HF_HUB_OFFLINE="1",
            PYTHONUNBUFFERED="1",
            **extra,
        )

    def start(self, **extra_env: str) -> subprocess.Popen:
        env = self.environment(**extra_env)
        if not self.started:
            subprocess.run(
                [*self.command, "purge", "-f", "-Q", self.queue],
                env=env,
                cwd=ROOT,
                check=True,
                capture_output=True,
                timeout=60,
            )
        log = (self.log_folder / f"worker-{len(self.started)}.log").open("w")
        process = subprocess.Popen(
            [
                *self.command,
                "worker",
                "-Q",
                self.queue,
                "-P",
                self.pool,
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "info",
            ],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append((process, log))
        celery_app.conf.task_always_eager = False
        return process

    def logs(self) -> str:
        return "\n".join(path.read_text() for path in sorted(self.log_folder.glob("worker-*.log")))

    def stop_all(self) -> None:
        for process, log in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            log.close()
