"""`settings/get` names where the model's key comes from, in the planner's own order."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.errors
import pytest
from keyring.backends import fail

from sidecar.handlers.services import Services
from sidecar.handlers.settings import key_source_of
from sidecar.keychain import (
    KEYCHAIN,
    KEYRING_REFUSED,
    MODEL_KEY_USER,
    MODEL_SERVICE,
    Keychain,
)
from sidecar.llm.config import resolve_lm_config
from sidecar.llm.provider import PlannerProvider
from sidecar.model_key import ModelKey
from sidecar.protocol import Empty, SettingsInfo, SettingsSetParams
from sidecar.settings import Settings
from tests.sidecar.handlers.conftest import call
from tests.sidecar.host.memory_keyring import MemoryKeyring, memory_keyring_installed
from tests.sidecar.rpc.peer import build_services


def test_atrium_model_api_key_wins_over_the_provider_variable() -> None:
    env = {"ATRIUM_MODEL_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}
    assert key_source_of("openai/gpt-4o-mini", env) == ("environment", "ATRIUM_MODEL_API_KEY")


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("gpt-4o", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.0-flash", "GOOGLE_API_KEY"),
    ],
)
def test_the_provider_variable_is_named(model: str, variable: str) -> None:
    assert key_source_of(model, {variable: "k"}) == ("provider", variable)


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("openai/gpt-4o-mini", {}),
        ("openai/gpt-4o-mini", {"OPENAI_API_KEY": "   ", "ATRIUM_MODEL_API_KEY": ""}),
        ("openai/gpt-4o-mini", {"ANTHROPIC_API_KEY": "k"}),  # another provider's key
        ("ollama_chat/llama3.1", {"OPENAI_API_KEY": "k"}),
        (None, {"OPENAI_API_KEY": "k"}),
    ],
    ids=["nothing", "blank", "other-provider", "local-model", "no-model"],
)
def test_without_a_variable_for_this_model_the_keyring_is_next(
    model: str | None, env: dict[str, str]
) -> None:
    assert key_source_of(model, env) == ("none", None)


@pytest.mark.parametrize(
    "env",
    [
        {"ATRIUM_MODEL_API_KEY": "from-atrium", "OPENAI_API_KEY": "from-provider"},
        {"OPENAI_API_KEY": "from-provider"},
        {},
    ],
)
def test_the_named_source_is_the_key_the_planner_uses(env: dict[str, str]) -> None:
    model = "openai/gpt-4o-mini"
    config = resolve_lm_config(model, None, env, lambda _user: "from-keyring")
    assert config is not None
    source, variable = key_source_of(model, env)
    expected = env[variable] if variable else "from-keyring"
    assert source in ("environment", "provider", "none")
    assert config.api_key == expected


@pytest.fixture
def keyring_backend() -> Iterator[MemoryKeyring]:
    with memory_keyring_installed() as memory:
        yield memory


@pytest.fixture
def svc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    for name in ("ATRIUM_MODEL", "ATRIUM_MODEL_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ATRIUM_WORKSPACE", str(tmp_path / "ws"))
    services = build_services(tmp_path)
    yield services
    services.store.db.close()


@pytest.mark.anyio
async def test_opening_settings_sees_a_key_stored_or_removed_outside_atrium(
    svc: Services, keyring_backend: MemoryKeyring
) -> None:
    await call(svc, "settings/set", SettingsSetParams(model="openai/gpt-4o-mini"), SettingsInfo)
    assert (await call(svc, "settings/get", Empty(), SettingsInfo)).api_key_source == "none"

    keyring_backend.store[(MODEL_SERVICE, MODEL_KEY_USER)] = "sk-from-the-keychain-app"
    assert (await call(svc, "settings/get", Empty(), SettingsInfo)).api_key_source == "keyring"
    assert KEYCHAIN.get(MODEL_SERVICE, MODEL_KEY_USER) == "sk-from-the-keychain-app"

    del keyring_backend.store[(MODEL_SERVICE, MODEL_KEY_USER)]
    assert (await call(svc, "settings/get", Empty(), SettingsInfo)).api_key_source == "none"


@pytest.mark.anyio
async def test_a_key_set_through_settings_is_stored_and_named(
    svc: Services, keyring_backend: MemoryKeyring
) -> None:
    info = await call(
        svc,
        "settings/set",
        SettingsSetParams(model="openai/gpt-4o-mini", api_key="sk-typed"),
        SettingsInfo,
    )
    assert (info.api_key_source, info.has_api_key) == ("keyring", True)
    assert keyring_backend.store[(MODEL_SERVICE, MODEL_KEY_USER)] == "sk-typed"


def test_invalidating_one_secret_keeps_the_others_cached(keyring_backend: MemoryKeyring) -> None:
    chain = Keychain()
    keyring_backend.store[("atrium-mcp", "GH")] = "tok-1"
    keyring_backend.store[(MODEL_SERVICE, MODEL_KEY_USER)] = "sk-1"
    chain.get("atrium-mcp", "GH")
    chain.get(MODEL_SERVICE, MODEL_KEY_USER)
    reads = chain.backend_reads

    chain.invalidate(MODEL_SERVICE, MODEL_KEY_USER)
    chain.get("atrium-mcp", "GH")
    chain.get(MODEL_SERVICE, MODEL_KEY_USER)

    assert chain.backend_reads == reads + 1


@pytest.mark.anyio
async def test_the_backups_kept_are_a_setting_with_a_default_and_zero_turns_them_off(
    svc: Services, keyring_backend: MemoryKeyring
) -> None:
    assert (await call(svc, "settings/get", Empty(), SettingsInfo)).backup_days == 7

    off = await call(svc, "settings/set", SettingsSetParams(backup_days=0), SettingsInfo)
    other = await call(svc, "settings/set", SettingsSetParams(model="openai/x"), SettingsInfo)

    assert off.backup_days == 0 and other.backup_days == 0
    assert svc.settings.load().backup_days == 0
    back = await call(svc, "settings/set", SettingsSetParams(backup_days=30), SettingsInfo)
    assert back.backup_days == 30


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """A Linux desktop without a keyring: the `keyring` package found no backend."""
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(before)


@pytest.mark.anyio
async def test_without_a_keyring_every_field_is_saved_and_the_key_kept_for_this_session(
    svc: Services, no_keyring: None
) -> None:
    typed = SettingsSetParams(
        model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1", api_key="sk-typed"
    )

    info = await call(svc, "settings/set", typed, SettingsInfo)

    assert (info.model, info.api_base, info.api_key_source) == (
        "openai/gpt-4o-mini",
        "http://127.0.0.1:9/v1",
        "session",
    )
    assert info.keyring_problem == KEYCHAIN.problem() is not None
    assert svc.settings.load() == Settings(model="openai/gpt-4o-mini", api_base=typed.api_base)
    assert svc.model_key.value() == "sk-typed"
    assert not svc.model_key.file_path.exists()
    shown = await call(svc, "settings/get", Empty(), SettingsInfo)
    assert (shown.api_key_source, shown.key_file) == ("session", str(svc.model_key.file_path))


@pytest.mark.anyio
async def test_without_a_keyring_the_key_moves_to_the_encrypted_file_and_outlives_the_session(
    svc: Services, no_keyring: None
) -> None:
    await call(svc, "settings/set", SettingsSetParams(api_key="sk-typed"), SettingsInfo)

    moved = await call(svc, "settings/set", SettingsSetParams(api_key_storage="file"), SettingsInfo)

    path = svc.model_key.file_path
    assert moved.api_key_source == "file"
    assert b"sk-typed" not in path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    restarted = ModelKey(svc.data_dir)
    assert await restarted.load() == "file"
    provider = PlannerProvider(svc.settings, {"ATRIUM_MODEL": "openai/gpt-4o-mini"}, restarted)
    config = provider.config()
    assert config is not None and config.api_key == "sk-typed"

    forgot = await call(svc, "settings/set", SettingsSetParams(api_key=""), SettingsInfo)
    assert (forgot.api_key_source, path.exists()) == ("none", False)


@pytest.mark.anyio
async def test_a_key_typed_for_the_file_goes_there_directly(
    svc: Services, no_keyring: None
) -> None:
    params = SettingsSetParams(api_key="sk-file", api_key_storage="file")

    info = await call(svc, "settings/set", params, SettingsInfo)

    assert info.api_key_source == "file"
    assert await ModelKey(svc.data_dir).load() == "file"


@pytest.mark.anyio
async def test_with_a_keyring_there_is_no_problem_and_the_key_goes_there(
    svc: Services, keyring_backend: MemoryKeyring
) -> None:
    await call(
        svc, "settings/set", SettingsSetParams(api_key="sk-1", api_key_storage="file"), SettingsInfo
    )

    info = await call(svc, "settings/set", SettingsSetParams(api_key="sk-2"), SettingsInfo)

    assert (info.api_key_source, info.keyring_problem) == ("keyring", None)
    assert keyring_backend.store[(MODEL_SERVICE, MODEL_KEY_USER)] == "sk-2"
    assert not svc.model_key.file_path.exists()  # one key, in one place


class _RefusingKeyring(MemoryKeyring):
    """Reads work, writes are refused (a locked keyring)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("locked")


@pytest.mark.anyio
async def test_a_keyring_that_refuses_the_write_keeps_the_key_for_the_session_and_says_why(
    svc: Services,
) -> None:
    before = keyring.get_keyring()
    keyring.set_keyring(_RefusingKeyring())
    try:
        params = SettingsSetParams(model="openai/gpt-4o-mini", api_key="sk-typed")
        info = await call(svc, "settings/set", params, SettingsInfo)
    finally:
        keyring.set_keyring(before)

    assert (info.model, info.api_key_source) == ("openai/gpt-4o-mini", "session")
    assert info.keyring_problem == KEYRING_REFUSED
    assert svc.model_key.value() == "sk-typed"
