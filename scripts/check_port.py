"""Exit 1 with one line when HOST:PORT is taken (often a `make demo` still running).

`make demo` and `make serve` call it before anything else, so a busy port changes nothing:
no migration, no demo data, no rotated passwords. scripts/serve.sh calls it too.
"""

import socket
import sys


def main(host: str, port: str) -> int:
    probe = socket.socket()
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, int(port)))
    except (OSError, ValueError, OverflowError):
        print(
            f"Port {port} on {host} is in use or not a port (is another 'make demo' or"
            " 'make serve' running?). Stop it, or pick another port: make demo PORT=8001",
            file=sys.stderr,
        )
        return 1
    finally:
        probe.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
