"""`${env:NAME}` / `${secret:NAME}` placeholders, the keyring, and redaction."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sidecar.host.config import ConfigInvalidError, validate_entry
from sidecar.host.secrets import (
    KEYRING_SERVICE,
    Redactor,
    keyring_secret,
    resolve,
    set_keyring_secret,
)
from tests.sidecar.host.memory_keyring import MemoryKeyring, memory_keyring_installed


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    with memory_keyring_installed() as backend:
        yield backend


def test_placeholders_resolve_from_the_environment_and_the_secret_store() -> None:
    config = validate_entry(
        "gh",
        {
            "command": "${env:TOOLS}/server",
            "args": ["--token=${secret:GH}"],
            "env": {"TOKEN": "${secret:GH}", "HOME_DIR": "${env:HOME}"},
        },
    )
    resolved = resolve(config, {"TOOLS": "/opt/t", "HOME": "/home/a"}, {"GH": "s3cret!"}.get)
    assert resolved.command == "/opt/t/server"
    assert resolved.args == ("--token=s3cret!",)
    assert resolved.env == {"TOKEN": "s3cret!", "HOME_DIR": "/home/a"}
    assert resolved.secrets == ("s3cret!",)


def test_an_unset_placeholder_names_the_server_and_field() -> None:
    config = validate_entry("gh", {"url": "http://127.0.0.1/mcp", "headers": {"A": "${secret:X}"}})
    with pytest.raises(ConfigInvalidError) as info:
        resolve(config, {}, {}.get)
    assert [(i.server, i.field) for i in info.value.issues] == [("gh", "headers.A")]


def test_secrets_round_trip_through_the_os_keyring_service(memory_keyring: MemoryKeyring) -> None:
    set_keyring_secret("GH", "tok-123")
    assert memory_keyring.store == {(KEYRING_SERVICE, "GH"): "tok-123"}
    assert keyring_secret("GH") == "tok-123"
    set_keyring_secret("GH", None)
    assert keyring_secret("GH") is None
    with pytest.raises(ValueError):
        set_keyring_secret("bad name", "x")


def test_the_redactor_masks_every_known_secret() -> None:
    redact = Redactor(["tok-123", "abc"])
    assert "tok-123" not in redact("token=tok-123; again tok-123")
    assert redact("abc") == "abc"  # too short to mask safely
