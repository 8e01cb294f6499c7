"""The encrypted secrets file: where a key is kept when the computer has no keyring and the author
chooses a file over typing the key again each session (the choice browsers and editors offer on
a Linux desktop without one).

What protects it, said plainly (the Settings dialog says the same): the secrets are encrypted
with Fernet (AES-128 in CBC mode with an HMAC) under a random key that is kept in a second file
beside them; the folder and both files can be read only by the author's user account. That keeps
the secret out of plain sight, out of the settings file and out of a copy of the secrets file
alone, but any program running as the author can read both files: a keyring is safer.

Every method blocks (file I/O, and the first use imports `cryptography`): the sidecar calls them
off its event loop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import cast

log = logging.getLogger(__name__)

FOLDER_NAME = "keys"
SECRETS_NAME = "secrets.enc"
KEY_NAME = "secrets.key"
_PRIVATE_DIR = 0o700
_PRIVATE_FILE = 0o600


class SecretFile:
    """Named secrets, encrypted, in `<folder>/secrets.enc` (with its key in `secrets.key`).

    A file that cannot be decrypted (its key lost or replaced) reads as empty and is set aside
    on the next write, never deleted."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / SECRETS_NAME
        self._key_path = folder / KEY_NAME

    def get(self, name: str) -> str | None:
        """The secret called `name`, or None."""
        return (self._load() or {}).get(name)

    def set(self, name: str, value: str | None) -> None:
        """Keep `value` under `name` (None: remove it; the files go when nothing is left).

        Raises:
            OSError: the folder or a file could not be written.
        """
        secrets = self._load()
        if secrets is None:  # unreadable: kept aside, in case its key turns up again
            self.path.replace(self.path.with_suffix(".unreadable"))
            secrets = {}
        if value:
            secrets[name] = value
        else:
            secrets.pop(name, None)
        if not secrets:
            self._remove()
            return
        from cryptography.fernet import Fernet

        token = Fernet(self._key()).encrypt(json.dumps(secrets).encode("utf-8"))
        _write_private(self.path, token)

    def _load(self) -> dict[str, str] | None:
        """The secrets; None for a file that cannot be decrypted."""
        try:
            token = self.path.read_bytes()
            key = self._key_path.read_bytes()
        except FileNotFoundError:
            return {}
        from cryptography.fernet import Fernet, InvalidToken

        try:
            raw = json.loads(Fernet(key).decrypt(token))
        except (InvalidToken, ValueError) as exc:
            log.error("the secrets file %s cannot be read (%s); it is ignored", self.path, exc)
            return None
        if not isinstance(raw, dict):
            return None
        entries = cast(dict[str, object], raw)
        return {k: v for k, v in entries.items() if isinstance(v, str)}

    def _key(self) -> bytes:
        """The file's encryption key, made on first use (a file that no key opens is set
        aside first, so the new key never stands beside a secret it cannot read)."""
        with contextlib.suppress(FileNotFoundError):
            return self._key_path.read_bytes()
        from cryptography.fernet import Fernet

        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, _PRIVATE_DIR)
        if self.path.exists():
            self.path.replace(self.path.with_suffix(".unreadable"))
        key = Fernet.generate_key()
        _write_private(self._key_path, key)
        return key

    def _remove(self) -> None:
        for path in (self.path, self._key_path):
            path.unlink(missing_ok=True)


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically, readable by the owner only from the first byte."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, _PRIVATE_DIR)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE_FILE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
