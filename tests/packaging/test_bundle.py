"""The one-folder bundle (`make bundle`) works on a machine without Python: `make bundle-test`.

Deselected from `make test` (marker `bundle`); `make bundle-test` builds the bundle and runs
these with `ATRIUM_BUNDLE` pointing at it. PATH holds only /usr/bin:/bin, so nothing can come
from the venv or a Python on PATH.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from bench._proc import LineClient, make_workspace

pytestmark = [pytest.mark.bundle, pytest.mark.anyio]

WINDOW_UP_S = 8.0


@pytest.fixture(scope="module")
def bundle() -> Path:
    path = Path(os.environ.get("ATRIUM_BUNDLE", "dist/atrium")).resolve()
    executable = path / "atrium"
    if not executable.is_file():
        pytest.fail(f"no bundle at {path}: run `make bundle` first", pytrace=False)
    return executable


def _bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "ATRIUM_DATA_DIR": str(tmp_path / "data"),
        "ATRIUM_WORKSPACE": str(make_workspace(tmp_path / "ws")),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        **extra,
    }


BUILT_IN_SERVERS = {"workspace", "sandbox", "memory", "schedule", "skills", "agents"}


async def test_the_bundle_serves_as_the_sidecar_with_its_built_in_servers(
    bundle: Path, tmp_path: Path
) -> None:
    client = await LineClient.spawn([str(bundle), "--sidecar"], _bare_env(tmp_path), cwd=tmp_path)
    try:
        async with asyncio.timeout(60):
            init = await client.call("initialize", {"client_name": "bundle-test"})
        assert init["protocol_version"]
        # Every built-in server starts from the bundle's own executable (in-process or as a
        # sub-command), with no Python on PATH.
        servers: set[str] = set()
        names: set[str] = set()
        async with asyncio.timeout(60):
            while servers != BUILT_IN_SERVERS:
                listed = (await client.call("tool/list"))["tools"]
                servers = {tool["server"] for tool in listed}
                names = {tool["name"] for tool in listed}
        assert {"workspace__read", "sandbox__run_python", "memory__search", "skills__list"} <= names
        thread = await client.call("thread/create", {"title": "bundle"})
        run = await client.call(
            "run/start",
            {"thread_id": thread["id"], "text": '/call workspace__read {"path": "notes.md"}'},
        )
        events = await client.run_to_end(run["run_id"], within=120)
        results = [e for e in events if e["type"] == "tool_result"]
        assert results and not results[0]["is_error"], events
        assert "the river is wide" in results[0]["content"]
        assert events[-1]["type"] == "run_finished"
    finally:
        await client.close()
    assert b"Traceback" not in client.stderr, client.stderr.decode(errors="replace")


def test_the_bundle_opens_the_window_and_stays_up(bundle: Path, tmp_path: Path) -> None:
    env = _bare_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen(
        [str(bundle)], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    started = time.monotonic()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=WINDOW_UP_S)
    up_for = time.monotonic() - started
    proc.terminate()
    try:
        _, stderr = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
    text = stderr.decode(errors="replace")
    assert up_for >= WINDOW_UP_S, f"the window exited with {proc.returncode}:\n{text}"
    assert "Traceback" not in text, text
