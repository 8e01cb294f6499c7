"""Settings, the keyring, the sandbox server and the log file, through the real sidecar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.protocol import ErrorCode
from tests.e2e.harness import RpcFailure, Sidecar, event_types

pytestmark = pytest.mark.anyio

KEYRING = {"PYTHON_KEYRING_BACKEND": "tests.fakes.keyring_file.FileKeyring"}


async def test_settings_round_trip_and_the_key_goes_to_the_keyring_only(
    sidecar_data: Path, workspace: Path, tmp_path: Path
):
    keyring_file = tmp_path / "keyring.json"
    process = await Sidecar.start(
        sidecar_data, workspace, ATRIUM_TEST_KEYRING=str(keyring_file), **KEYRING
    )
    try:
        before = await process.call("settings/get")
        assert before["model"] is None and before["has_api_key"] is False
        assert before["model_source"] == "none"
        after = await process.call(
            "settings/set",
            {"model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-x"},
        )
        assert after["model"] == "openai/gpt-4o-mini" and after["model_source"] == "settings"
        assert after["has_api_key"] is True
        assert json.loads(keyring_file.read_text()) == {"atrium/model_api_key": "sk-x"}
        assert "sk-x" not in (sidecar_data / "settings.json").read_text()
        db_bytes = (sidecar_data / "atrium.db").read_bytes()
        assert b"sk-x" not in db_bytes
        cleared = await process.call("settings/set", {"api_key": ""})
        assert cleared["has_api_key"] is False
        with pytest.raises(RpcFailure) as relative:
            await process.call("settings/set", {"workspace": "relative/path"})
        assert relative.value.code == ErrorCode.SETTINGS_INVALID
    finally:
        await process.kill()


async def test_changing_the_workspace_moves_the_file_tools_there(sidecar: Sidecar, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "elsewhere.md").write_text("moved\n")
    changed = await sidecar.call("settings/set", {"workspace": str(other)})
    assert changed["workspace"] == str(other.resolve())
    thread = await sidecar.call("thread/create", {})
    run = await sidecar.call(
        "run/start",
        {"thread_id": thread["id"], "text": '/call workspace__read {"path": "elsewhere.md"}'},
    )
    events = await sidecar.run_to_end(run["run_id"])
    result = next(e.event for e in events if e.event.type == "tool_result")
    assert not result.is_error and "moved" in result.content  # type: ignore[union-attr]


async def test_code_runs_in_the_sandbox_only_after_approval(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    code = json.dumps({"code": "print(6 * 7)"})
    run = await sidecar.call(
        "run/start", {"thread_id": thread["id"], "text": f"/call sandbox__run_python {code}"}
    )
    events = await sidecar.run_to_end(run["run_id"], within=90)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    assert (interrupt.server, interrupt.tool) == ("sandbox", "run_python")
    resumed = await sidecar.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": interrupt.id,
            "value": {"decision": "allow_once"},
        },
    )
    events = await sidecar.run_to_end(resumed["run_id"], within=90)
    result = next(e.event for e in events if e.event.type == "tool_result")
    assert not result.is_error and "42" in result.content  # type: ignore[union-attr]
    assert event_types(events)[-1] == "run_finished"


async def test_logs_go_to_a_file_in_the_data_dir(sidecar: Sidecar, sidecar_data: Path):
    await sidecar.call("ping")
    log = sidecar_data / "logs" / "sidecar.log"
    assert log.exists() and "starting" in log.read_text()
