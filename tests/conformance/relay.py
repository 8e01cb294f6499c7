"""The command the conformance suite runs as its client under test, when `python -m
tests.conformance` runs the suite: it hands the scenario to that runner, which drives it on its
one long-lived sidecar (`tests.conformance.client.run_scenario`), and exits with its status.

`python tests/conformance/relay.py <socket> <server-url>`: one JSON line to the runner's Unix
socket (the URL, `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT` parsed), one JSON line
back (`{"exit": <status>}`). Standard library only, run as a file, so that it starts in a few
tens of milliseconds: a sidecar per scenario would cost seconds each.
"""

from __future__ import annotations

import json
import os
import socket
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: relay.py <socket> <server-url>", file=sys.stderr)
        return 2
    request = {
        "url": argv[-1],
        "scenario": os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
        "context": json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"),
    }
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as runner:
        runner.connect(argv[1])
        runner.sendall(json.dumps(request).encode() + b"\n")
        reply = runner.makefile("rb").readline()
    if not reply:
        print("the conformance runner closed the connection", file=sys.stderr)
        return 1
    return int(json.loads(reply)["exit"])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
