"""Where the model's API key is kept, as the author chose: the OS keyring (the default), the
encrypted secrets file in the data folder (`sidecar.secret_file`, for a computer without a
keyring), or this session's memory only.

One key, in one place: keeping it somewhere clears the others, so an older key never shadows a
newer one. A key the author asked to keep in the keyring, where the keyring fails, is kept for
this session instead (the author's typing is never lost) and `Keychain.problem()` says why; the
window then offers the file.

The planner reads the key on the event loop every turn (`value`), so every place is read off the
loop first (`load`, at start-up and when Settings opens) and served from memory after that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from sidecar.keychain import (
    KEYCHAIN,
    KEYRING_SLOW,
    MODEL_KEY_USER,
    MODEL_SERVICE,
    Keychain,
    KeyringUnavailableError,
)
from sidecar.protocol import ApiKeyPlace
from sidecar.secret_file import FOLDER_NAME, SecretFile

log = logging.getLogger(__name__)

KEYRING_WRITE_S = 30.0
"""How long storing the key may wait on the keyring (a locked keychain can prompt the author)."""
FILE_DEADLINE_S = 10.0
"""How long reading or writing the secrets file may take (a slow or network disk)."""

FILE_SECRET = f"{MODEL_SERVICE}/{MODEL_KEY_USER}"


class ModelKey:
    """The model key across its three places (thread-safe reads; writes from the event loop)."""

    def __init__(self, data_dir: Path, keychain: Keychain = KEYCHAIN) -> None:
        self._keychain = keychain
        self._file = SecretFile(data_dir / FOLDER_NAME)
        self._session: str | None = None
        self._from_file: str | None = None
        self._file_read = False

    @property
    def file_path(self) -> Path:
        """Where the encrypted secrets file is (or would be) kept."""
        return self._file.path

    def value(self) -> str | None:
        """The key: this session's, else the keyring's, else the file's. Reads a place not yet
        loaded (blocking, as the keyring read always did before `load`)."""
        if self._session:
            return self._session
        stored = self._keychain.get(MODEL_SERVICE, MODEL_KEY_USER)
        if stored:
            return stored
        if not self._file_read:
            self._read_file()
        return self._from_file

    async def load(self, *, reread: bool = False) -> ApiKeyPlace | None:
        """Read the keyring and the file off the event loop (each within its deadline); returns
        where the key is now. `reread` asks again instead of memory, for a key changed outside
        Atrium (the system's keychain app)."""
        if self._session:
            return "session"
        if reread:
            self._keychain.invalidate(MODEL_SERVICE, MODEL_KEY_USER)
        if await self._keychain.aget(MODEL_SERVICE, MODEL_KEY_USER):
            return "keyring"
        if reread or not self._file_read:
            try:
                await asyncio.wait_for(asyncio.to_thread(self._read_file), FILE_DEADLINE_S)
            except TimeoutError:
                log.warning("the secrets file did not answer within %.0f s", FILE_DEADLINE_S)
        return "file" if self._from_file else None

    async def keep(self, value: str | None, place: ApiKeyPlace) -> ApiKeyPlace | None:
        """Keep `value` in `place` and clear the other places (None or empty: forget it
        everywhere). Where the keyring fails the key is kept for this session; returns where
        it is now.

        Raises:
            OSError: the secrets file could not be written.
        """
        value = value or None
        if value is None:
            await self._clear_keyring()
            await self._write_file(None)
            self._session = None
            return None
        if place == "keyring":
            try:
                await self._write_keyring(value)
            except KeyringUnavailableError:
                place = "session"
        else:
            await self._clear_keyring()
        await self._write_file(value if place == "file" else None)
        self._session = value if place == "session" else None
        return place

    async def move(self, place: ApiKeyPlace) -> ApiKeyPlace | None:
        """Keep the current key in `place` instead (nothing kept: nothing to move).

        Raises:
            OSError: the secrets file could not be written.
        """
        if await self.load() is None:
            return None
        return await self.keep(self.value(), place)

    def _read_file(self) -> None:
        try:
            self._from_file = self._file.get(FILE_SECRET)
        except OSError as exc:
            log.warning("the secrets file %s cannot be read: %s", self._file.path, exc)
            self._from_file = None
        self._file_read = True

    async def _write_file(self, value: str | None) -> None:
        if value is None and self._file_read and self._from_file is None:
            return  # nothing there to clear
        await asyncio.wait_for(
            asyncio.to_thread(self._file.set, FILE_SECRET, value), FILE_DEADLINE_S
        )
        self._from_file, self._file_read = value, True

    async def _write_keyring(self, value: str | None) -> None:
        """Write (None: delete) the keyring's copy within `KEYRING_WRITE_S`.

        Raises:
            KeyringUnavailableError: no usable backend, or one that did not answer in time.
        """
        try:
            await asyncio.wait_for(
                asyncio.to_thread(self._keychain.set, MODEL_SERVICE, MODEL_KEY_USER, value),
                KEYRING_WRITE_S,
            )
        except TimeoutError as exc:
            self._keychain.note_failure(KEYRING_SLOW)
            raise KeyringUnavailableError(KEYRING_SLOW) from exc

    async def _clear_keyring(self) -> None:
        """Delete the keyring's copy where there is a keyring (without one there is none)."""
        if await self._keychain.aproblem() is not None:
            return
        with contextlib.suppress(KeyringUnavailableError):
            await self._write_keyring(None)
