"""An in-memory keyring backend, so secrets can be stored for real through the `keyring` API
in tests (also in a sidecar subprocess: `PYTHON_KEYRING_BACKEND=<this module>.MemoryKeyring`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    priority = 1  # pyright: ignore[reportAssignmentType]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.store.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@contextlib.contextmanager
def memory_keyring_installed() -> Iterator[MemoryKeyring]:
    """A fresh `MemoryKeyring` as the process's keyring backend while the block runs."""
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(before)
