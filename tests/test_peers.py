"""A missing npm peer skips loudly, or fails when ATRIUM_REQUIRE_PEERS=1."""

from __future__ import annotations

import pytest

from tests.peers import REQUIRE_PEERS, SKIP_PREFIX, peer_unavailable


def test_a_missing_peer_skips_with_a_marked_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_PEERS, raising=False)
    with pytest.raises(pytest.skip.Exception) as caught:
        peer_unavailable("npm not on PATH")
    assert str(caught.value).startswith(SKIP_PREFIX)


def test_a_missing_peer_fails_when_peers_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_PEERS, "1")
    with pytest.raises(pytest.fail.Exception):
        peer_unavailable("npm not on PATH")
