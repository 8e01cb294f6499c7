"""The keychain reads each secret from the OS keyring once and keeps writes in step."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from unittest.mock import ANY

import keyring
import keyring.errors
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail, null

from sidecar.keychain import (
    KEYRING_OFF,
    KEYRING_REFUSED,
    NO_KEYRING_LINUX,
    Keychain,
    KeyringUnavailableError,
)
from tests.sidecar.host.memory_keyring import MemoryKeyring, memory_keyring_installed


class BrokenKeyring(KeyringBackend):
    priority = 1  # pyright: ignore[reportAssignmentType]

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("no backend")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.PasswordDeleteError("no backend")


@pytest.fixture
def backend() -> Iterator[MemoryKeyring]:
    with memory_keyring_installed() as memory:
        yield memory


def test_a_secret_is_read_from_the_backend_once(backend: MemoryKeyring) -> None:
    backend.store[("atrium", "model_api_key")] = "sk-1"
    chain = Keychain()

    assert [chain.get("atrium", "model_api_key") for _ in range(50)] == ["sk-1"] * 50
    assert chain.backend_reads == 1


def test_a_write_is_seen_at_once_without_another_read(backend: MemoryKeyring) -> None:
    chain = Keychain()
    assert chain.get("atrium-mcp", "GH") is None

    chain.set("atrium-mcp", "GH", "tok-2")

    assert chain.get("atrium-mcp", "GH") == "tok-2"
    assert backend.store[("atrium-mcp", "GH")] == "tok-2"
    assert chain.backend_reads == 1
    chain.set("atrium-mcp", "GH", None)
    assert chain.get("atrium-mcp", "GH") is None
    assert ("atrium-mcp", "GH") not in backend.store


def test_invalidate_reads_a_change_made_outside_atrium(backend: MemoryKeyring) -> None:
    chain = Keychain()
    assert chain.get("atrium", "model_api_key") is None
    backend.store[("atrium", "model_api_key")] = "sk-outside"
    assert chain.get("atrium", "model_api_key") is None

    chain.invalidate()

    assert chain.get("atrium", "model_api_key") == "sk-outside"
    assert list(chain.known_values()) == ["sk-outside"]


def test_a_broken_backend_reads_as_absent_and_is_asked_again_but_refuses_writes() -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    try:
        chain = Keychain()
        assert chain.get("atrium", "model_api_key") is None
        assert chain.get("atrium", "model_api_key") is None
        assert chain.backend_reads == 2
        with pytest.raises(KeyringUnavailableError):
            chain.set("atrium", "model_api_key", "sk-x")
    finally:
        keyring.set_keyring(previous)


@pytest.mark.anyio
async def test_an_async_read_runs_off_the_event_loop_and_caches(backend: MemoryKeyring) -> None:
    backend.store[("atrium", "model_api_key")] = "sk-3"
    chain = Keychain()

    assert await chain.aget("atrium", "model_api_key") == "sk-3"
    assert await chain.aget("atrium", "model_api_key") == "sk-3"
    assert chain.backend_reads == 1


@pytest.mark.parametrize(
    ("backend", "problem"),
    [(fail.Keyring(), NO_KEYRING_LINUX), (null.Keyring(), KEYRING_OFF), (MemoryKeyring(), None)],
    ids=["no-backend", "null", "working"],
)
def test_the_problem_says_in_the_authors_words_what_is_missing(
    backend: KeyringBackend, problem: str | None
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        chain = Keychain()
        assert chain.problem() == (problem if sys.platform == "linux" or not problem else ANY)
        if problem is not None:
            with pytest.raises(KeyringUnavailableError) as refused:
                chain.set("atrium", "model_api_key", "sk-x")
            assert str(refused.value) == chain.problem()
    finally:
        keyring.set_keyring(previous)


def test_a_refused_write_is_the_problem_until_a_write_succeeds() -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    try:
        chain = Keychain()
        with pytest.raises(KeyringUnavailableError):
            chain.set("atrium", "model_api_key", "sk-x")
        assert chain.problem() == KEYRING_REFUSED
        with memory_keyring_installed():
            chain.set("atrium", "model_api_key", "sk-x")
            assert chain.problem() is None
    finally:
        keyring.set_keyring(previous)
