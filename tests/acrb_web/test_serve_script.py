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
import urllib.request
from pathlib import Path

import pytest

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
    log = (tmp_path / "serve.out").open("w+")
    script = subprocess.Popen(
        ["bash", str(ROOT / "scripts" / "serve.sh")],
        cwd=tmp_path,  # var/log/ is written here
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a process group of its own, as a terminal's foreground job
        # Ctrl-C must not be ignored on entry, or bash could not trap it (a test runner started
        # in the background ignores it; a terminal does not).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or script.poll() is not None:
                    pytest.fail(f"the server did not start: {(tmp_path / 'serve.out').read_text()}")
                time.sleep(0.5)
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
