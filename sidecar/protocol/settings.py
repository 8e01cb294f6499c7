"""Wire methods for the settings dialog (`settings/*`): the model, its key, the workspace, and
how many daily backups of the database to keep."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty
from sidecar.protocol.models_base import WireModel

ApiKeyPlace: TypeAlias = Literal["keyring", "file", "session"]
"""Where Atrium keeps a key the author typed: the OS keyring; an encrypted file in the data folder
(for a computer without a keyring); or the sidecar's memory, for this session only."""

ApiKeySource: TypeAlias = Literal["keyring", "file", "session", "environment", "provider", "none"]

DEFAULT_BACKUP_DAYS = 7
MAX_BACKUP_DAYS = 365


class SettingsInfo(WireModel):
    model: str | None
    api_base: str | None
    workspace: str
    has_api_key: bool
    model_source: Literal["settings", "environment", "none"]
    api_key_source: ApiKeySource = Field(
        default="none",
        description=(
            "Where the key the model uses comes from: `environment` (ATRIUM_MODEL_API_KEY), "
            "`provider` (the provider's variable, named in `api_key_variable`), `session` (kept "
            "in memory until the sidecar exits), `keyring`, `file` (the encrypted key file), or "
            "`none`. The environment wins over the others, in that order."
        ),
    )
    api_key_variable: str | None = Field(
        default=None, description="The environment variable that holds the key, if one does."
    )
    backup_days: int = Field(
        default=DEFAULT_BACKUP_DAYS,
        ge=0,
        le=MAX_BACKUP_DAYS,
        description="How many daily backups of the database are kept (in `backups/` beside it); "
        "0: none are taken.",
    )
    keyring_problem: str | None = Field(
        default=None,
        description="Why the OS keyring cannot keep the key, in the author's words, with how to "
        "add one; None while it works.",
    )
    key_file: str | None = Field(
        default=None, description="Where the encrypted key file is, or would be, kept."
    )


class SettingsSetParams(WireModel):
    """Only the fields present change, and every other field is kept whatever becomes of the
    key. `api_key` goes where `api_key_storage` says (the OS keyring by default; where the keyring
    fails it is kept for this session, and `SettingsInfo.keyring_problem` says why); an empty
    string removes it from every place. `api_key_storage` alone moves the kept key there."""

    model: str | None = None
    api_base: str | None = None
    workspace: str | None = None
    api_key: str | None = None
    api_key_storage: ApiKeyPlace | None = None
    backup_days: int | None = Field(default=None, ge=0, le=MAX_BACKUP_DAYS)


SETTINGS_GET = "settings/get"
SETTINGS_SET = "settings/set"

SETTINGS_METHODS: dict[str, MethodSpec] = {
    SETTINGS_GET: MethodSpec(Empty, SettingsInfo, "Current settings."),
    SETTINGS_SET: MethodSpec(SettingsSetParams, SettingsInfo, "Change settings."),
}
