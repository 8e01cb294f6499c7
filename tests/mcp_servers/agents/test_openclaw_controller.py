"""OpenClawController against a fake `openclaw` printing log lines and a JSON document."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.agents.controllers import OpenClawConfig, OpenClawController
from mcp_servers.agents.events import Completed, MessageCompleted, SessionStarted
from mcp_servers.agents.requests import ResumeRequest, StartRequest
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import LOCAL_TRANSCRIPTS, collect, fake_log, fake_settings

pytestmark = pytest.mark.anyio


def controller(tmp_path: Path, transcript: Path | None, **env: str) -> OpenClawController:
    return OpenClawController(OpenClawConfig(**fake_settings(tmp_path, transcript, **env)))


async def test_agent_json_output_becomes_events_and_a_result(tmp_path: Path) -> None:
    request = StartRequest(
        session_id="atrium-3", working_dir=tmp_path, instruction="outline", timeout_s=30
    )
    async with controller(tmp_path, LOCAL_TRANSCRIPTS / "openclaw_gateway.txt") as ctl:
        await ctl.start(request)
        events = await collect(ctl)
        result = await ctl.wait()

    argv = fake_log(tmp_path, "argv")[0]["argv"]
    assert argv[:3] == ["agent", "--agent", "main"]
    assert "--message=outline" in argv
    assert "--json" in argv
    assert argv[argv.index("--timeout") + 1] == "30"
    assert events[0] == SessionStarted(session_id="oc-session-42", model="claude-sonnet-4-6")
    assert [e.text for e in events if isinstance(e, MessageCompleted)] == [
        "Drafted the chapter outline.",
        "Saved it as outline.md.",
    ]
    assert isinstance(events[-1], Completed)
    assert result.status == "success"
    assert result.policy is not None and result.policy.can_ask_permission is False


async def test_failed_resume_falls_back_to_a_fresh_session(tmp_path: Path) -> None:
    request = ResumeRequest(
        session_id="atrium-3",
        working_dir=tmp_path,
        instruction="more",
        native_session_id="oc-gone",
    )
    transcript = LOCAL_TRANSCRIPTS / "openclaw_gateway.txt"
    async with controller(tmp_path, transcript, FAKE_CLI_MISSING_SESSION="oc-gone") as ctl:
        await ctl.resume(request)
        await collect(ctl)
        result = await ctl.wait()

    sessions = [r["argv"][r["argv"].index("--session-id") + 1] for r in fake_log(tmp_path, "argv")]
    assert sessions[0] == "oc-gone"
    assert sessions[1] != "oc-gone"
    assert result.status == "success"


async def test_cli_error_without_document_is_a_process_failure(tmp_path: Path) -> None:
    request = StartRequest(session_id="atrium-3", working_dir=tmp_path, instruction="x")
    async with controller(tmp_path, None, FAKE_CLI_EXIT_CODE="1") as ctl:
        await ctl.start(request)
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.PROCESS_EXITED
