"""A sidecar that cannot serve this data folder says why and exits with EXIT_REFUSED, and the
desktop shows the reason instead of restarting it in a loop."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from pytestqt.qtbot import QtBot

from desktop.ipc.process import SidecarProcess
from sidecar.protocol import EXIT_REFUSED, refusal_reason
from sidecar.store import open_database
from sidecar.store.db import SCHEMA_VERSION
from tests.e2e.harness import Sidecar


def _newer_database(data_dir: Path) -> Path:
    path = data_dir / "atrium.db"
    open_database(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 5),)
    )
    conn.commit()
    conn.close()
    return path


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_real_sidecar_refuses_a_database_from_a_newer_version(
    sidecar_data: Path, workspace: Path
) -> None:
    path = _newer_database(sidecar_data)
    snapshot = path.read_bytes()

    sidecar = await Sidecar.spawn(sidecar_data, workspace)
    with anyio.fail_after(60):
        code = await sidecar.proc.wait()
    await sidecar.kill()

    assert code == EXIT_REFUSED
    reason = refusal_reason(sidecar.stderr.decode("utf-8", "replace"))
    assert reason is not None and "newer Atrium" in reason
    assert path.read_bytes() == snapshot


@pytest.mark.slow
def test_the_desktop_reports_a_refusal_once_and_does_not_restart(
    qtbot: QtBot, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _newer_database(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(ATRIUM_DATA_DIR=str(data), ATRIUM_WORKSPACE=str(tmp_path))
    process = SidecarProcess(sys.executable, ["-m", "sidecar"], env, restart_delay_ms=0)
    died: list[int] = []
    process.died.connect(lambda code, _tail: died.append(code))

    with qtbot.waitSignal(process.refused, timeout=60_000) as refused:
        process.start()

    assert "newer Atrium" in refused.args[0]
    assert died == []
    assert process.has_given_up
