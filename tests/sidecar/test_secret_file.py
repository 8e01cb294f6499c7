"""The encrypted secrets file keeps named secrets out of plain sight, owner-only, and sets aside
a file no key opens instead of overwriting it."""

from __future__ import annotations

import stat
from pathlib import Path

from sidecar.secret_file import KEY_NAME, SecretFile


def test_secrets_round_trip_encrypted_and_owner_only(tmp_path: Path) -> None:
    secrets = SecretFile(tmp_path / "keys")

    secrets.set("atrium/model_api_key", "sk-secret-value")
    secrets.set("atrium-mcp/GH", "tok-1")

    assert SecretFile(tmp_path / "keys").get("atrium/model_api_key") == "sk-secret-value"
    assert b"sk-secret-value" not in secrets.path.read_bytes()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in secrets.folder.iterdir()}
    assert modes == {secrets.path.name: 0o600, KEY_NAME: 0o600}
    assert stat.S_IMODE(secrets.folder.stat().st_mode) == 0o700


def test_removing_the_last_secret_removes_the_files(tmp_path: Path) -> None:
    secrets = SecretFile(tmp_path / "keys")
    secrets.set("a", "1")

    secrets.set("a", None)

    assert secrets.get("a") is None
    assert list(secrets.folder.iterdir()) == []


def test_a_file_its_key_cannot_open_reads_empty_and_is_set_aside_on_write(tmp_path: Path) -> None:
    secrets = SecretFile(tmp_path / "keys")
    secrets.set("a", "1")
    (secrets.folder / KEY_NAME).unlink()
    old = secrets.path.read_bytes()

    assert secrets.get("a") is None
    secrets.set("b", "2")

    assert (secrets.get("a"), secrets.get("b")) == (None, "2")
    assert secrets.path.with_suffix(".unreadable").read_bytes() == old
