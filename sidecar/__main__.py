"""`python -m sidecar` / `atrium-sidecar`: the sidecar process on stdin/stdout.

`--start-fresh` and `--restore-backup BACKUP` repair the database before start-up (the window
passes them after a refused damaged database; see `sidecar.protocol.storage`)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys


def main() -> None:
    from sidecar.startup import amain, parse_repair

    repair = parse_repair(sys.argv[1:])
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(amain(repair))
    # Everything is closed by now (runs, MCP servers, the database). A worker thread still
    # loading the model (the warm-up, when the app quits right after it started) cannot be
    # interrupted, and `asyncio.run` and the interpreter would wait seconds for it, past the
    # desktop's patience: exit without waiting for it.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
