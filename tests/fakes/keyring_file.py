"""A keyring backend that keeps passwords in a JSON file named by `ATRIUM_TEST_KEYRING`, so a
sidecar subprocess and the test can share one keyring without touching the real OS keyring.

Select it with `PYTHON_KEYRING_BACKEND=tests.fakes.keyring_file.FileKeyring`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1.0  # pyright: ignore[reportAssignmentType]

    @staticmethod
    def _path() -> Path:
        return Path(os.environ["ATRIUM_TEST_KEYRING"])

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self._path().read_text())
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(data))
