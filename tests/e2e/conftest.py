"""Fixtures for tests that spawn the real sidecar."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.harness import Sidecar


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "notes.md").write_text("# Notes\nthe river is wide\n", encoding="utf-8")
    return path


@pytest.fixture
def sidecar_data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
async def sidecar(sidecar_data: Path, workspace: Path) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(sidecar_data, workspace)
    await process.call("initialize", {"client_name": "tests"})
    yield process
    await process.kill()
