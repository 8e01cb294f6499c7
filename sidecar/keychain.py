"""The one way the sidecar reaches the OS keyring: read once, cached, invalidated on change.

Two services live there: `atrium` (the model's API key) and `atrium-mcp` (secrets named in MCP
server configs). A keyring backend can be slow (Secret Service over D-Bus, a locked macOS
keychain waiting on a prompt), so a value is read from the backend once and then served from
memory; writing or deleting through this module updates the cache, and `invalidate()` drops it
(for a change made outside Atrium, e.g. in the system's keychain app: opening Settings re-reads
the model key).

A missing or broken backend is not an error for reads (the value is simply absent, and the read
is tried again next time); writes raise `KeyringUnavailableError`, so the author learns that the
key could not be kept safely. `Keychain.problem()` says, in the author's words, what is missing
and how to add a keyring (the library's own text goes to the log only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Iterator

log = logging.getLogger(__name__)

MODEL_SERVICE = "atrium"
MODEL_KEY_USER = "model_api_key"
SECRETS_SERVICE = "atrium-mcp"

READ_DEADLINE_S = 5.0
"""How long an async read waits for a slow backend before treating the value as absent."""


PROBLEM_DEADLINE_S = 5.0
"""How long finding the keyring backend may take (finding one can ask D-Bus)."""

NO_KEYRING_LINUX = (
    "There is no keyring on this computer: Atrium looks for the Secret Service that GNOME "
    "Keyring or KWallet provides, and none is running. To add one, install GNOME Keyring (the "
    "gnome-keyring package) or KWallet, sign out and back in, then save the key again."
)
NO_KEYRING_OTHER = (
    "The system keychain cannot be reached ({system}). Restart the computer or sign in again, "
    "then save the key again."
)
KEYRING_OFF = (
    "The keyring is switched off for Atrium: the PYTHON_KEYRING_BACKEND environment variable "
    "names one that keeps nothing. Remove that variable to use the system's keyring."
)
KEYRING_REFUSED = (
    "The system keyring refused to keep the key; it may be locked. Unlock it (signing in to the "
    "desktop again usually does), then save the key again."
)
KEYRING_SLOW = (
    "The system keyring did not answer in time; it may be waiting for you to unlock it. Unlock "
    "it, then save the key again."
)


class KeyringUnavailableError(RuntimeError):
    """No usable OS keyring backend: the secret cannot be stored safely. The message is in the
    author's words (what is missing, how to add it); the library's text is the cause."""


class Keychain:
    """A cache in front of the `keyring` package (thread-safe; reads may run in worker threads)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str | None] = {}
        self._lock = threading.Lock()
        self._failure: str | None = None
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

        missing = _missing_backend()
        if missing is not None:
            with self._lock:
                self._values.pop((service, name), None)
            raise KeyringUnavailableError(missing)
        try:
            if value:
                keyring.set_password(service, name, value)
            else:
                with contextlib.suppress(keyring.errors.PasswordDeleteError):
                    keyring.delete_password(service, name)
        except (keyring.errors.KeyringError, RuntimeError, OSError) as exc:
            log.warning("OS keyring refused to write %s/%s: %s", service, name, exc)
            with self._lock:
                self._values.pop((service, name), None)
                self._failure = KEYRING_REFUSED
            raise KeyringUnavailableError(KEYRING_REFUSED) from exc
        with self._lock:
            self._values[(service, name)] = value or None
            self._failure = None

    def note_failure(self, problem: str) -> None:
        """Remember why the keyring failed where the failure was seen outside this class (a
        write that did not answer in time): `problem` says so until a write succeeds."""
        with self._lock:
            self._failure = problem

    def problem(self) -> str | None:
        """Why the keyring cannot keep a secret, in the author's words (what is missing and how
        to add it), or None while it works. Blocks while the backend is first found: on the
        event loop, use `aproblem`."""
        missing = _missing_backend()
        if missing is not None:
            return missing
        with self._lock:
            return self._failure

    async def aproblem(self, *, deadline_s: float = PROBLEM_DEADLINE_S) -> str | None:
        """`problem` off the event loop; a backend that does not answer in time is a problem."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(self.problem), deadline_s)
        except TimeoutError:
            return KEYRING_SLOW

    def invalidate(self, service: str | None = None, name: str | None = None) -> None:
        """Forget cached values (every one, or one service's, or one secret): the next read asks
        the backend again. `settings/get` forgets the model key this way, so a key changed
        outside Atrium (the system's keychain app) shows when the author opens Settings."""
        with self._lock:
            if service is None:
                self._values.clear()
                self._failure = None  # and what a failure taught: the backend is asked again
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
            value = keyring.get_password(service, name)
        except (keyring.errors.KeyringError, RuntimeError, OSError) as exc:
            log.warning("OS keyring unavailable reading %s/%s: %s", service, name, exc)
            if _missing_backend() is None:
                with self._lock:
                    self._failure = KEYRING_REFUSED
            return None, False
        return value, True


def _missing_backend() -> str | None:
    """The author's words for a keyring that is absent (the `keyring` package found no backend,
    or one that keeps nothing was chosen), else None. Blocks while the backend is found."""
    import keyring
    from keyring.backends import fail, null

    backend = keyring.get_keyring()
    if isinstance(backend, null.Keyring):
        return KEYRING_OFF
    if not isinstance(backend, fail.Keyring):
        return None
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return NO_KEYRING_LINUX
    system = "the macOS keychain" if sys.platform == "darwin" else "Windows Credential Manager"
    return NO_KEYRING_OTHER.format(system=system)


KEYCHAIN = Keychain()
"""The process's keychain."""
