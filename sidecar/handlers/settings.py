"""settings/get, settings/set. The API key goes to the keyring only.

`settings/get` says truthfully where the key the model would use comes from, in the planner's own
order (`sidecar.llm.config`): `ATRIUM_MODEL_API_KEY`, else the provider's variable, else the
keyring.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path

from sidecar import settings as settings_mod
from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.keychain import KEYCHAIN, MODEL_KEY_USER, MODEL_SERVICE, KeyringUnavailableError
from sidecar.llm.config import API_KEY_ENV, provider_key_vars
from sidecar.protocol import (
    SETTINGS_GET,
    SETTINGS_SET,
    ApiKeySource,
    Empty,
    ErrorCode,
    RpcError,
    SettingsInfo,
    SettingsSetParams,
)

KEYRING_WRITE_S = 30.0
"""How long storing the key may wait on the keyring (a locked keychain can prompt the author)."""


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
        if reread_keyring:
            KEYCHAIN.invalidate(MODEL_SERVICE, MODEL_KEY_USER)
        if await KEYCHAIN.aget(MODEL_SERVICE, MODEL_KEY_USER):
            key_source = "keyring"
    return SettingsInfo(
        model=model,
        api_base=saved.api_base or os.environ.get("ATRIUM_MODEL_API_BASE"),
        workspace=str(workspace),
        has_api_key=key_source != "none",
        model_source=source,
        api_key_source=key_source,
        api_key_variable=variable,
        backup_days=saved.backup_days,
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
    if changes.get("workspace"):
        path = Path(changes["workspace"]).expanduser()
        if not path.is_absolute():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace must be an absolute path")
        if path.exists() and not path.is_dir():
            raise RpcError(ErrorCode.SETTINGS_INVALID, "workspace is not a folder")
    before = (await current(svc)).workspace
    if "api_key" in params.model_fields_set:
        with typed_errors():
            await _store_key(api_key or None)
    svc.settings.update(**changes)
    after = await current(svc)
    if after.workspace != before:
        await svc.workspace_changed(Path(after.workspace))
    return after


async def _store_key(value: str | None) -> None:
    """Write the key off the event loop, within `KEYRING_WRITE_S`.

    Raises:
        KeyringUnavailableError: no usable backend, or one that did not answer in time.
    """
    try:
        await asyncio.wait_for(asyncio.to_thread(settings_mod.keyring_set, value), KEYRING_WRITE_S)
    except TimeoutError as exc:
        raise KeyringUnavailableError(
            f"the OS keyring did not answer within {KEYRING_WRITE_S:.0f} s"
        ) from exc
