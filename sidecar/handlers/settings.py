"""settings/get, settings/set. The API key goes to the keyring only."""

from __future__ import annotations

import os
from pathlib import Path

from sidecar import settings as settings_mod
from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import Empty, ErrorCode, RpcError, SettingsInfo, SettingsSetParams


def current(svc: Services) -> SettingsInfo:
    saved = svc.settings.load()
    env_model = os.environ.get("ATRIUM_MODEL")
    source = "settings" if saved.model else ("environment" if env_model else "none")
    workspace = settings_mod.resolve_workspace(saved, os.environ, svc.data_dir)
    return SettingsInfo(
        model=saved.model or env_model,
        api_base=saved.api_base or os.environ.get("ATRIUM_MODEL_API_BASE"),
        workspace=str(workspace),
        has_api_key=bool(os.environ.get("ATRIUM_MODEL_API_KEY") or settings_mod.keyring_get()),
        model_source=source,
    )


@registry.method("settings/get")
async def get(svc: Services, params: Empty) -> SettingsInfo:
    del params
    return current(svc)


@registry.method("settings/set")
async def set_settings(svc: Services, params: SettingsSetParams) -> SettingsInfo:
    changes = params.model_dump(exclude_unset=True)
    api_key = changes.pop("api_key", None)
    if changes.get("workspace"):
        path = Path(changes["workspace"]).expanduser()
        if not path.is_absolute():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace must be an absolute path")
        if path.exists() and not path.is_dir():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace is not a folder")
    before = current(svc).workspace
    if "api_key" in params.model_fields_set:
        with typed_errors():
            settings_mod.keyring_set(api_key or None)
    svc.settings.update(**changes)
    after = current(svc)
    if after.workspace != before:
        await svc.workspace_changed(Path(after.workspace))
    return after
