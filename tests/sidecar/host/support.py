"""Helpers for host tests against real servers: configs, a status recorder, a host fixture."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from sidecar.host.config import ConfigFile, ServerConfig, validate_entry
from sidecar.host.host import ToolHost
from sidecar.host.spec import RestartPolicy, ServerStatus

PEER_SCRIPT = str(Path(__file__).with_name("peer_server.py"))
FAST = RestartPolicy(base_s=0.05, cap_s=0.2, max_attempts=3, stable_s=30, start_timeout_s=30)


def peer_config(name: str = "peer", **extra: Any) -> ServerConfig:
    return validate_entry(name, {"command": sys.executable, "args": [PEER_SCRIPT], **extra})


def time_config(name: str = "time", **extra: Any) -> ServerConfig:
    return validate_entry(name, {"command": "mcp-server-time", **extra})


class StatusLog:
    """Every status the host reported, with a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[ServerStatus] = []
        self._changed = asyncio.Event()

    def __call__(self, status: ServerStatus) -> None:
        self.seen.append(status)
        self._changed.set()

    def states(self, name: str) -> list[str]:
        return [s.state for s in self.seen if s.name == name]

    def mark(self) -> int:
        """A position in the history: `wait_for(..., since=mark)` ignores what came before."""
        return len(self.seen)

    async def wait_for(
        self, name: str, check: Callable[[ServerStatus], bool], within: float = 30, since: int = 0
    ) -> ServerStatus:
        """The first status of `name` at or after `since` that passes `check`."""

        def found() -> ServerStatus | None:
            return next((s for s in self.seen[since:] if s.name == name and check(s)), None)

        async with asyncio.timeout(within):
            while (result := found()) is None:
                self._changed.clear()
                await self._changed.wait()
        return result

    async def wait_state(
        self, name: str, state: str, within: float = 30, since: int = 0
    ) -> ServerStatus:
        return await self.wait_for(name, lambda s: s.state == state, within, since)


@pytest.fixture
def statuses() -> StatusLog:
    return StatusLog()


@pytest.fixture
async def host(tmp_path: Path, statuses: StatusLog) -> AsyncIterator[ToolHost]:
    built = ToolHost(
        [], config_file=ConfigFile(tmp_path / "mcp.json"), policy=FAST, on_status=statuses
    )
    built.start()
    yield built
    await built.aclose()
