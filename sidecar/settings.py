"""Where Atrium keeps its data and what the author configured.

Settings live in `settings.json` in the data dir (model, API base, workspace folder, how many
daily backups of the database to keep). The API key never does: it comes from the environment, or
is kept where the author chose (`sidecar.model_key`: the OS keyring, an encrypted file, or this
session only).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, cast

import platformdirs

from sidecar.protocol import DEFAULT_BACKUP_DAYS, MAX_BACKUP_DAYS

log = logging.getLogger(__name__)


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user data dir (`ATRIUM_DATA_DIR` overrides platformdirs' default)."""
    env = os.environ if env is None else env
    override = env.get("ATRIUM_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir("atrium", "atrium"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True, slots=True)
class Settings:
    model: str | None = None
    api_base: str | None = None
    workspace: str | None = None
    backup_days: int = DEFAULT_BACKUP_DAYS
    """How many daily backups of the database to keep (one a day); 0 takes none."""


class SettingsFile:
    """The settings JSON file. A corrupt file is set aside, never lost, and defaults apply."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Settings:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Settings()
        except (OSError, ValueError) as exc:
            backup = self.path.with_suffix(f".corrupt-{int(time.time())}.json")
            log.error("settings file %s unreadable (%s); moved to %s", self.path, exc, backup)
            self.path.replace(backup)
            return Settings()
        if not isinstance(raw, dict):
            return Settings()
        data = cast(dict[str, Any], raw)
        return Settings(
            model=_str_or_none(data.get("model")),
            api_base=_str_or_none(data.get("api_base")),
            workspace=_str_or_none(data.get("workspace")),
            backup_days=_days(data.get("backup_days")),
        )

    def save(self, settings: Settings) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(settings), indent=2), encoding="utf-8")
        tmp.replace(self.path)

    def update(self, **changes: str | int | None) -> Settings:
        """Change the named fields: an empty string or None clears a text field; None puts
        `backup_days` back to its default."""
        current = self.load()
        cleaned = {k: _cleaned(k, v) for k, v in changes.items()}
        new = replace(current, **cleaned)
        self.save(new)
        return new


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _days(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BACKUP_DAYS:
        return value
    return DEFAULT_BACKUP_DAYS


def _cleaned(key: str, value: str | int | None) -> str | int | None:
    if key == "backup_days":
        return _days(value)
    return value or None


def resolve_workspace(settings: Settings, env: Mapping[str, str], data: Path) -> Path:
    """The workspace root: settings, else `ATRIUM_WORKSPACE`, else `<documents>/Atrium`."""
    chosen = settings.workspace or env.get("ATRIUM_WORKSPACE")
    if chosen:
        path = Path(chosen).expanduser()
    else:
        path = Path(platformdirs.user_documents_dir()) / "Atrium"
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()
