"""Starting the app's real serving commands as a terminal does, for the tests of `make demo`,
`make serve` and scripts/serve.sh."""

import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest


def start_in_terminal(argv: list[str], *, cwd, env: dict, log: Path) -> subprocess.Popen:
    """``argv`` as a terminal's foreground job: a process group of its own, so a SIGINT to the
    group is Ctrl-C. SIGINT must not be ignored on entry, or bash could not trap it (a test
    runner started in the background ignores it; a terminal does not)."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=log.open("w+"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_until_serving(port: int, process: subprocess.Popen, log: Path, *, timeout_s: float):
    """Return once the login page answers on ``port``; fail with the log if the process ends
    or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"the server did not start: {log.read_text()}")
            time.sleep(0.5)
