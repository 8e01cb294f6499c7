"""settings/get, settings/set. The API key is kept where the author chose (`sidecar.model_key`):
the OS keyring by default, an encrypted file in the data folder, or this session only.

`settings/get` says truthfully where the key the model would use comes from, in the planner's own
order (`sidecar.llm.config`): `ATRIUM_MODEL_API_KEY`, else the provider's variable, else the
stored key (this session's, the keyring's, the file's); and, where the keyring cannot keep a key,
why, in the author's words. `settings/set` keeps every other field whatever becomes of the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sidecar import settings as settings_mod
from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.keychain import KEYCHAIN
from sidecar.llm.config import API_KEY_ENV, provider_key_vars
from sidecar.protocol import (
    SETTINGS_GET,
    SETTINGS_SET,
    ApiKeyPlace,
    ApiKeySource,
    Empty,
    ErrorCode,
    RpcError,
    SettingsInfo,
    SettingsSetParams,
)


async def current(svc: Services, *, reread_keyring: bool = False) -> SettingsInfo:
    """The settings as the planner would use them. The keyring is read off the event loop
    (a backend can hang on a prompt); `reread_keyring` asks the backend again instead of the
    cache, for a key changed outside Atrium."""
    saved = svc.settings.load()
    env_model = os.environ.get("ATRIUM_MODEL")
    source = "settings" if saved.model else ("environment" if env_model else "none")
    workspace = settings_mod.resolve_workspace(saved, os.environ, svc.data_dir)
    model = saved.model or env_model
    key_source, variable = key_source_of(model, os.environ)
    if key_source == "none":
        key_source = await svc.model_key.load(reread=reread_keyring) or "none"
    return SettingsInfo(
        model=model,
        api_base=saved.api_base or os.environ.get("ATRIUM_MODEL_API_BASE"),
        workspace=str(workspace),
        has_api_key=key_source != "none",
        model_source=source,
        api_key_source=key_source,
        api_key_variable=variable,
        backup_days=saved.backup_days,
        keyring_problem=await KEYCHAIN.aproblem(),
        key_file=str(svc.model_key.file_path),
    )


def key_source_of(model: str | None, env: Mapping[str, str]) -> tuple[ApiKeySource, str | None]:
    """Which environment variable holds the model's key (`environment`: ATRIUM_MODEL_API_KEY,
    `provider`: the provider's usual one), or `("none", None)`: then the keyring is asked."""
    if env.get(API_KEY_ENV, "").strip():
        return "environment", API_KEY_ENV
    for name in provider_key_vars(model) if model else ():
        if env.get(name, "").strip():
            return "provider", name
    return "none", None


@registry.method(SETTINGS_GET)
async def get(svc: Services, params: Empty) -> SettingsInfo:
    del params
    return await current(svc, reread_keyring=True)


@registry.method(SETTINGS_SET)
async def set_settings(svc: Services, params: SettingsSetParams) -> SettingsInfo:
    changes = params.model_dump(exclude_unset=True)
    api_key = changes.pop("api_key", None)
    changes.pop("api_key_storage", None)
    place: ApiKeyPlace = params.api_key_storage or "keyring"
    if changes.get("workspace"):
        path = Path(changes["workspace"]).expanduser()
        if not path.is_absolute():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace must be an absolute path")
        if path.exists() and not path.is_dir():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace is not a folder")
    before = (await current(svc)).workspace
    svc.settings.update(**changes)  # first: nothing else waits on the key's fate
    with typed_errors():
        if "api_key" in params.model_fields_set:
            await svc.model_key.keep(api_key, place)
        elif params.api_key_storage is not None:
            await svc.model_key.move(place)
    after = await current(svc)
    if after.workspace != before:
        await svc.workspace_changed(Path(after.workspace))
    return after
