"""Wire methods for the settings dialog (`settings/*`): the model, its key, the workspace, and
how many daily backups of the database to keep."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty
from sidecar.protocol.models_base import WireModel

ApiKeySource: TypeAlias = Literal["keyring", "environment", "provider", "none"]

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
            "`provider` (the provider's variable, named in `api_key_variable`), `keyring`, or "
            "`none`. The environment wins over the keyring."
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


class SettingsSetParams(WireModel):
    """Only the fields present change. `api_key` goes to the OS keyring, never to disk here;
    an empty string removes it."""

    model: str | None = None
    api_base: str | None = None
    workspace: str | None = None
    api_key: str | None = None
    backup_days: int | None = Field(default=None, ge=0, le=MAX_BACKUP_DAYS)


SETTINGS_GET = "settings/get"
SETTINGS_SET = "settings/set"

SETTINGS_METHODS: dict[str, MethodSpec] = {
    SETTINGS_GET: MethodSpec(Empty, SettingsInfo, "Current settings."),
    SETTINGS_SET: MethodSpec(SettingsSetParams, SettingsInfo, "Change settings."),
}
