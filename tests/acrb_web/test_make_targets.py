"""Issue 36 §5: `make demo` / `make serve` as a terminal runs them.

- A busy port stops them before anything else runs: before, `make demo` migrated, rebuilt the
  demo and rotated every password (logging everyone out) and only then found the port taken.
- A clean Ctrl-C prints no make "*** Interrupt" line.
Both run the real Makefile; they need its set-up already done (`make -q setup`), as it is after
`make test` or `make demo`, and skip otherwise rather than build a virtual environment.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.serving import start_in_terminal, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]

needs_make = pytest.mark.skipif(
    shutil.which("make") is None
    or subprocess.run(["make", "-q", "setup"], cwd=ROOT, capture_output=True).returncode != 0
    or not Path(sys.executable).parent.joinpath("gunicorn").exists(),
    reason="needs make and the Makefile's set-up already done (.venv)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _env(tmp_path, port: int) -> dict:
    return {
        **os.environ,
        "PORT": str(port),
        "ACRB_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": "filesystem://",
        "GUNICORN_WORKERS": "2",
        "MAKEFLAGS": "",
    }


@needs_make
@pytest.mark.parametrize("target", ["demo", "serve"])
def test_a_busy_port_stops_make_before_anything_runs(tmp_path, target):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            ["make", "--no-print-directory", target, f"PORT={port}"],
            cwd=ROOT,
            env=_env(tmp_path, port),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    assert f"Port {port} on 127.0.0.1 is in use" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    # Nothing ran: no database was migrated, so no demo data and no rotated passwords.
    assert not (tmp_path / "db.sqlite3").exists()
    assert "manage.py" not in done.stdout


@needs_make
def test_ctrl_c_on_make_serve_prints_no_make_interrupt_line(tmp_path):
    port = _free_port()
    log = tmp_path / "make.out"
    make = start_in_terminal(
        ["make", "--no-print-directory", "serve", f"PORT={port}"],
        cwd=ROOT,
        env=_env(tmp_path, port),
        log=log,
    )
    try:
        wait_until_serving(port, make, log, timeout_s=120)
        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C reaches the whole group, make included
        make.wait(timeout=30)
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
    text = (tmp_path / "make.out").read_text()
    assert "Stopped. Start again with: make serve" in text
    assert "Interrupt" not in text, text
    assert "***" not in text, text
