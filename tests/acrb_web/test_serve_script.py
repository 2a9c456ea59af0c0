"""Issue 21 §1.5: `make demo` / `make serve` stop promptly on Ctrl-C, print their "Stopped"
line, and leave no server or worker behind, with no gunicorn SIGKILL ("Perhaps out of
memory?"). The script runs as a terminal would run it: its own process group, SIGINT sent to
the whole group (what Ctrl-C does)."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.serving import start_in_terminal, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(
    not Path(sys.executable).parent.joinpath("gunicorn").exists(), reason="gunicorn not installed"
)
def test_ctrl_c_stops_server_and_worker_at_once_with_its_stopped_line(tmp_path):
    port = _free_port()
    env = {
        **os.environ,
        "PY": sys.executable,
        "PORT": str(port),
        "ACRB_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": "filesystem://",
        "GUNICORN_WORKERS": "2",
        "PYTHONPATH": str(ROOT),
    }
    log = tmp_path / "serve.out"
    # cwd: var/log/ is written there.
    script = start_in_terminal(
        ["bash", str(ROOT / "scripts" / "serve.sh")], cwd=tmp_path, env=env, log=log
    )
    try:
        wait_until_serving(port, script, log, timeout_s=90)
        # A browser keeps a connection open; gunicorn used to wait on it.
        held = socket.create_connection(("127.0.0.1", port))
        held.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
        held.recv(65536)
        started = time.monotonic()
        os.killpg(script.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
        script.wait(timeout=20)
        took = time.monotonic() - started
        held.close()
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
    out = (tmp_path / "serve.out").read_text()
    assert "Stopped. Start again with: make serve" in out
    assert took < 8, took
    server_log = tmp_path / "var" / "log" / "server.log"
    assert "Perhaps out of memory" not in (server_log.read_text() if server_log.exists() else "")
    time.sleep(0.5)
    leftovers = subprocess.run(["pgrep", "-f", f"127.0.0.1:{port}"], capture_output=True, text=True)
    assert leftovers.stdout.strip() == "", leftovers.stdout
