"""The one way the sidecar reaches the OS keyring: read once, cached, invalidated on change.

Two services live there: `atrium` (the model's API key) and `atrium-mcp` (secrets named in MCP
server configs). A keyring backend can be slow (Secret Service over D-Bus, a locked macOS
keychain waiting on a prompt), so a value is read from the backend once and then served from
memory; writing or deleting through this module updates the cache, and `invalidate()` drops it
(for a change made outside Atrium, e.g. in the system's keychain app: opening Settings re-reads
the model key).

A missing or broken backend is not an error for reads (the value is simply absent, and the read
is tried again next time); writes raise `KeyringUnavailableError`, so the author learns that the
key could not be kept safely.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator

log = logging.getLogger(__name__)

MODEL_SERVICE = "atrium"
MODEL_KEY_USER = "model_api_key"
SECRETS_SERVICE = "atrium-mcp"

READ_DEADLINE_S = 5.0
"""How long an async read waits for a slow backend before treating the value as absent."""


class KeyringUnavailableError(RuntimeError):
    """No usable OS keyring backend: the secret cannot be stored safely."""


class Keychain:
    """A cache in front of the `keyring` package (thread-safe; reads may run in worker threads)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str | None] = {}
        self._lock = threading.Lock()
        self.backend_reads = 0
        """How many times the backend was asked (tests and diagnostics)."""

    def get(self, service: str, name: str) -> str | None:
        """The secret, from memory after the first successful read. Blocks on that first read:
        on the event loop, use `aget`."""
        key = (service, name)
        with self._lock:
            if key in self._values:
                return self._values[key]
        value, ok = self._read(service, name)
        if ok:
            with self._lock:
                self._values[key] = value
        return value

    async def aget(
        self, service: str, name: str, *, deadline_s: float = READ_DEADLINE_S
    ) -> str | None:
        """`get` off the event loop, giving up (None) after `deadline_s` on a hung backend."""
        key = (service, name)
        with self._lock:
            if key in self._values:
                return self._values[key]
        try:
            return await asyncio.wait_for(asyncio.to_thread(self.get, service, name), deadline_s)
        except TimeoutError:
            log.warning("the OS keyring did not answer within %.0f s", deadline_s)
            return None

    def set(self, service: str, name: str, value: str | None) -> None:
        """Store `value` (None or empty: delete it) and remember it.

        Raises:
            KeyringUnavailableError: no usable keyring backend.
        """
        import keyring
        import keyring.errors

        try:
            if value:
                keyring.set_password(service, name, value)
            else:
                with contextlib.suppress(keyring.errors.PasswordDeleteError):
                    keyring.delete_password(service, name)
        except keyring.errors.KeyringError as exc:
            with self._lock:
                self._values.pop((service, name), None)
            raise KeyringUnavailableError(str(exc)) from exc
        with self._lock:
            self._values[(service, name)] = value or None

    def invalidate(self, service: str | None = None, name: str | None = None) -> None:
        """Forget cached values (every one, or one service's, or one secret): the next read asks
        the backend again. `settings/get` forgets the model key this way, so a key changed
        outside Atrium (the system's keychain app) shows when the author opens Settings."""
        with self._lock:
            if service is None:
                self._values.clear()
                return
            for key in [k for k in self._values if k[0] == service and name in (None, k[1])]:
                del self._values[key]

    def known_values(self) -> Iterator[str]:
        """Every secret read or written so far (for redacting them from output)."""
        with self._lock:
            values = [v for v in self._values.values() if v]
        yield from values

    def _read(self, service: str, name: str) -> tuple[str | None, bool]:
        import keyring
        import keyring.errors

        self.backend_reads += 1
        try:
            return keyring.get_password(service, name), True
        except (keyring.errors.KeyringError, RuntimeError, OSError) as exc:
            log.warning("OS keyring unavailable reading %s/%s: %s", service, name, exc)
            return None, False


KEYCHAIN = Keychain()
"""The process's keychain."""
