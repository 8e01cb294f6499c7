"""Tests that need real peers (npm packages: server-everything, the agent CLIs, OpenClaw, the MCP
Inspector) run when npm and its registry are there, and say so loudly when they are not.

`ATRIUM_REQUIRE_PEERS=1` (CI sets it) turns such a skip into a failure, so a machine that should
have the peers never passes by skipping them.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_PEERS = "ATRIUM_REQUIRE_PEERS"
SKIP_PREFIX = "PEER UNAVAILABLE"


def peers_required() -> bool:
    return os.environ.get(REQUIRE_PEERS, "") == "1"


def peer_unavailable(reason: str) -> NoReturn:
    """Skip the test for a missing peer, or fail it when peers are required.

    Raises:
        pytest.fail.Exception: `ATRIUM_REQUIRE_PEERS=1`.
        pytest.skip.Exception: otherwise.
    """
    if peers_required():
        pytest.fail(f"{SKIP_PREFIX} but {REQUIRE_PEERS}=1: {reason}", pytrace=False)
    pytest.skip(f"{SKIP_PREFIX} (set {REQUIRE_PEERS}=1 to fail instead): {reason}")
