"""Fixtures for the framing and server tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from sidecar.rpc.framing import MAX_FRAME_BYTES
from tests.sidecar.rpc.peer import Peer, ScriptedRoutes, build_services, registry_routes
from tests.sidecar.rpc.streams import Capture, capture_writer

PeerFactory = Callable[..., Peer]


@pytest.fixture
async def capture() -> AsyncIterator[Capture]:
    """A FrameWriter whose output is captured; its transport is closed afterwards."""
    cap = capture_writer()
    yield cap
    cap.transport.close()


@pytest.fixture
def scripted() -> ScriptedRoutes:
    return ScriptedRoutes()


@pytest.fixture
async def make_peer(
    tmp_path: Path, capture: Capture, scripted: ScriptedRoutes
) -> AsyncIterator[PeerFactory]:
    """Builds the one peer of a test (optionally with a small max frame size). Afterwards the
    server must stop at EOF and must have sent nothing the test did not read."""
    services = build_services(tmp_path)
    peers: list[Peer] = []

    def build(
        *, max_bytes: int = MAX_FRAME_BYTES, gated: bool = False, real: tuple[str, ...] = ()
    ) -> Peer:
        """`real`: more methods served by their real handlers, beside ping and initialize."""
        routes = scripted.routes() | registry_routes(services, ("ping", "initialize", *real))
        peer = Peer(routes, capture, max_bytes=max_bytes, gated=gated)
        peers.append(peer)
        return peer

    yield build
    for gate in scripted.gates.values():
        gate.release.set()
    try:
        for peer in peers:
            await peer.close()
            assert peer.unread() == []
    finally:
        services.store.db.close()


@pytest.fixture
def peer(make_peer: PeerFactory) -> Peer:
    return make_peer()
