"""`identity/get` and `identity/set` keep to the workspace and read huge files only in part.
Real services over a real SQLite file and real folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.handlers.services import Services
from sidecar.protocol import (
    MAX_IDENTITY_BYTES,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
    MemoryErrorCode,
    RpcError,
)
from sidecar.settings import Settings
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services

pytestmark = pytest.mark.anyio


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    services = build_services(tmp_path)
    yield services
    services.store.db.close()


@pytest.fixture
def workspace(svc: Services, tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    svc.settings.save(Settings(workspace=str(root)))
    return root


async def _identity(svc: Services) -> dict[str, IdentityFileInfo]:
    got = await call(svc, "identity/get", IdentityGetParams(), IdentityGetResult)
    return {f.path: f for f in got.files}


async def _set_refused(svc: Services, path: str, text: str) -> int:
    params = IdentitySetParams.model_validate({"path": path, "text": text})
    with pytest.raises(RpcError) as refused:
        await call(svc, "identity/set", params, IdentityFileInfo)
    return refused.value.code


async def test_identity_set_writes_a_new_file_byte_exact_and_leaves_no_temporary_file(
    svc: Services, workspace: Path
) -> None:
    text = "Be brief.\r\nCall the river the Wend.  \n"
    params = IdentitySetParams(path=".atrium/USER.md", text=text)
    saved = await call(svc, "identity/set", params, IdentityFileInfo)

    assert saved == IdentityFileInfo(path=".atrium/USER.md", exists=True, text=text)
    assert (workspace / ".atrium" / "USER.md").read_bytes() == text.encode()
    assert sorted(p.name for p in (workspace / ".atrium").iterdir()) == ["USER.md"]
    assert (await _identity(svc))[".atrium/USER.md"].text == text


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "existing file"])
async def test_identity_set_refuses_an_atrium_folder_linked_outside_the_workspace(
    svc: Services, workspace: Path, tmp_path: Path, existing: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    if existing:
        (outside / "USER.md").write_text("private")
    os.symlink(outside, workspace / ".atrium", target_is_directory=True)

    code = await _set_refused(svc, ".atrium/USER.md", "overwritten?")

    assert code == MemoryErrorCode.IDENTITY_REFUSED
    assert {p.name: p.read_text() for p in outside.iterdir()} == (
        {"USER.md": "private"} if existing else {}
    )
    user = (await _identity(svc))[".atrium/USER.md"]
    assert (user.exists, user.text, user.error is not None) == (existing, "", existing)


async def test_identity_set_refuses_a_file_that_is_a_link_even_inside_the_workspace(
    svc: Services, workspace: Path
) -> None:
    (workspace / "CLAUDE.md").write_text("Rules.\n")
    os.symlink(workspace / "CLAUDE.md", workspace / "AGENTS.md")

    assert await _set_refused(svc, "AGENTS.md", "New rules.\n") == (
        MemoryErrorCode.IDENTITY_REFUSED
    )
    assert (workspace / "CLAUDE.md").read_text() == "Rules.\n"
    assert (workspace / "AGENTS.md").is_symlink()


@pytest.mark.parametrize("first", ["a", "é", "—"], ids=["1 byte", "2 bytes", "3 bytes"])
async def test_identity_get_reads_a_huge_file_only_to_its_bound_cut_at_a_character(
    svc: Services, workspace: Path, first: str
) -> None:
    # Four-byte characters after a shorter one: the byte bound falls inside a character.
    head = first + "𝄞" * MAX_IDENTITY_BYTES
    (workspace / ".atrium").mkdir()
    with (workspace / ".atrium" / "SOUL.md").open("wb") as handle:
        handle.write(head.encode())
        handle.truncate(64 * 2**20)  # a 64 MiB file, sparse past its head

    soul = (await _identity(svc))[".atrium/SOUL.md"]

    assert soul.truncated and soul.error is not None
    assert soul.text == first + "𝄞" * (MAX_IDENTITY_BYTES - 1)


async def test_identity_get_gives_back_whole_what_identity_set_wrote_and_cuts_longer_text(
    svc: Services, workspace: Path
) -> None:
    longest = "é" * MAX_IDENTITY_BYTES  # the most identity/set accepts: 512,000 bytes
    params = IdentitySetParams(path=".atrium/AGENT.md", text=longest)
    await call(svc, "identity/set", params, IdentityFileInfo)
    (workspace / ".atrium" / "USER.md").write_text("é" * (MAX_IDENTITY_BYTES + 1))

    files = await _identity(svc)

    agent, user = files[".atrium/AGENT.md"], files[".atrium/USER.md"]
    assert (agent.text == longest, agent.truncated, agent.error) == (True, False, None)
    assert (user.text == longest, user.truncated) == (True, True)
