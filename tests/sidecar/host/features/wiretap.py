"""A stdio pass-through that copies every client→server line to a listener on 127.0.0.1.

Run as `python wiretap.py PORT COMMAND...`: the command's stdout and stderr are ours, its stdin
is fed line by line from ours, and each line also goes to 127.0.0.1:PORT. Tests use it to see
what the host really sent to a server (e.g. `notifications/cancelled`). Stdlib only: the SDK
starts it with a bare environment.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys


def main() -> int:
    port = int(sys.argv[1])
    tap = socket.create_connection(("127.0.0.1", port))
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE)
    assert child.stdin is not None
    try:
        for line in sys.stdin.buffer:
            child.stdin.write(line)
            child.stdin.flush()
            tap.sendall(line)
    except (BrokenPipeError, ConnectionError):
        pass
    finally:
        tap.close()
        with contextlib.suppress(BrokenPipeError):
            child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main())
