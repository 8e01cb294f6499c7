"""CodexController against a fake `codex` that replays real transcripts on stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_servers.agents.controllers import CodexConfig, CodexController
from mcp_servers.agents.errors import UnknownPermissionRequestError
from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    Completed,
    Failed,
    SessionStarted,
    StateHint,
)
from mcp_servers.agents.parsers import CodexStreamParser, ParseStep, StreamParser
from mcp_servers.agents.requests import AllowTool, ResumeRequest, StartRequest, ToolPolicy
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import (
    collect,
    fake_log,
    fake_settings,
    shared_transcript,
    wait_pid_gone,
)

pytestmark = pytest.mark.anyio


def controller(tmp_path: Path, transcript: Path | None, **env: str) -> CodexController:
    return CodexController(CodexConfig(**fake_settings(tmp_path, transcript, **env)))


def start_request(tmp_path: Path, **fields: Any) -> StartRequest:
    return StartRequest(session_id="atrium-2", working_dir=tmp_path, instruction="list", **fields)


async def test_run_streams_items_with_stdin_on_dev_null(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("codex_5.jsonl")) as ctl:
        await ctl.start(start_request(tmp_path))
        events = await collect(ctl)
        result = await ctl.wait()

    [call] = fake_log(tmp_path, "argv")
    assert call["stdin_devnull"] is True
    argv = call["argv"]
    assert argv[:2] == ["exec", "--json"]
    assert argv[argv.index("-C") + 1] == str(tmp_path)
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert "--skip-git-repo-check" in argv
    assert argv[-2:] == ["--", "list"]
    assert events[0] == SessionStarted(session_id="01a0586e-5a43-7001-9628-cde66a53e993")
    assert any(isinstance(e, ArtifactCreated) for e in events)
    assert isinstance(events[-1], Completed)
    assert result.status == "success"
    assert result.exit_code == 0
    assert result.policy is not None
    assert result.policy.can_ask_permission is False
    assert result.policy.native == ("--sandbox", "workspace-write")
    with pytest.raises(UnknownPermissionRequestError):
        await ctl.answer_permission("any", AllowTool())


async def test_resume_places_exec_flags_before_the_subcommand(tmp_path: Path) -> None:
    thread = "01a0586e-5a43-7001-9628-cde66a53e993"
    request = ResumeRequest(
        session_id="atrium-2",
        working_dir=tmp_path,
        instruction="again",
        native_session_id=thread,
        tool_policy=ToolPolicy(mode="read_only"),
    )
    async with controller(tmp_path, shared_transcript("codex_6.jsonl")) as ctl:
        await ctl.resume(request)
        await collect(ctl)
        result = await ctl.wait()

    argv = fake_log(tmp_path, "argv")[0]["argv"]
    resume_at = argv.index("resume")
    assert argv[resume_at + 1] == thread
    assert argv.index("--sandbox") < resume_at
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert argv.index("-C") < resume_at
    assert argv[-2:] == ["--", "again"]
    assert result.session is not None and result.session.session_id == thread
    assert [(a.mode, a.outcome) for a in result.attempts] == [("resume", "completed")]


async def test_failed_resume_falls_back_to_a_fresh_start(tmp_path: Path) -> None:
    request = ResumeRequest(
        session_id="atrium-2",
        working_dir=tmp_path,
        instruction="again",
        native_session_id="019-missing",
    )
    transcript = shared_transcript("codex_3.jsonl")
    async with controller(tmp_path, transcript, FAKE_CLI_RESUME_FAILS="1") as ctl:
        await ctl.resume(request)
        events = await collect(ctl)
        result = await ctl.wait()

    argvs = [r["argv"] for r in fake_log(tmp_path, "argv")]
    assert ["resume" in argv for argv in argvs] == [True, False]
    assert result.status == "success"
    assert result.final_message == "hello"
    assert [a.outcome for a in result.attempts] == ["resume_failed", "completed"]
    hint = next(e for e in events if isinstance(e, StateHint) and e.hint == "resume_failed")
    assert "no rollout found for thread id 019-missing" in str(hint.detail["message"])


async def test_interrupt_sends_sigint_and_accepts_a_non_zero_exit(tmp_path: Path) -> None:
    transcript = shared_transcript("codex_5.jsonl")
    async with controller(tmp_path, transcript, FAKE_CLI_HANG_AFTER="3") as ctl:
        await ctl.start(start_request(tmp_path))

        async def interrupt_on_session(event: AgentEvent) -> None:
            if isinstance(event, SessionStarted):
                await ctl.interrupt()

        await collect(ctl, interrupt_on_session)
        result = await ctl.wait()

    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert result.exit_code == 130  # the fake's SIGINT exit; any non-zero is accepted


async def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    transcript = shared_transcript("codex_1.jsonl")
    async with controller(
        tmp_path,
        transcript,
        FAKE_CLI_HANG_AFTER="2",
        FAKE_CLI_IGNORE_SIGNALS="1",
        FAKE_CLI_SPAWN_CHILD="1",
    ) as ctl:
        await ctl.start(start_request(tmp_path))

        async def interrupt_on_turn(event: AgentEvent) -> None:
            if not isinstance(event, SessionStarted):
                await ctl.interrupt()

        await collect(ctl, interrupt_on_turn)
        result = await ctl.wait()

    [child] = fake_log(tmp_path, "child")
    [call] = fake_log(tmp_path, "argv")
    assert result.status == "interrupted"
    assert result.exit_code == -9
    assert await wait_pid_gone(call["pid"])
    assert await wait_pid_gone(child["pid"])


async def test_timeout_of_a_hung_codex_is_reported_as_timeout(tmp_path: Path) -> None:
    transcript = shared_transcript("codex_3.jsonl")
    async with controller(tmp_path, transcript, FAKE_CLI_HANG_AFTER="2") as ctl:
        # Long enough for the stand-in CLI to start and print its session on a loaded machine.
        await ctl.start(start_request(tmp_path, timeout_s=3.0))
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "timeout"
    assert result.session is not None
    assert result.session.session_id == "019fe041-fb59-77a0-bce2-6d07f49e917c"


async def test_exit_without_a_terminal_event_is_a_process_failure(tmp_path: Path) -> None:
    lines = tmp_path / "partial.jsonl"
    lines.write_text('{"type":"thread.started","thread_id":"t-1"}\n{"type":"turn.started"}\n')
    async with controller(tmp_path, lines, FAKE_CLI_EXIT_CODE="3") as ctl:
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code is ErrorCode.PROCESS_EXITED
    assert result.error.detail["exit_code"] == 3


async def test_failed_turn_is_a_failed_run(tmp_path: Path) -> None:
    async with controller(
        tmp_path, shared_transcript("codex_2.jsonl"), FAKE_CLI_EXIT_CODE="1"
    ) as ctl:
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.API_ERROR
    assert result.exit_code == 1


async def test_runs_follow_one_another_on_one_controller(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("codex_3.jsonl")) as ctl:
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        first = await ctl.wait()
        await ctl.start(start_request(tmp_path))
        await collect(ctl)
        second = await ctl.wait()

    assert (first.status, second.status) == ("success", "success")
    assert first.run_id != second.run_id


class _BrokenParser(CodexStreamParser):
    def on_object(self, obj: dict[str, Any]) -> ParseStep:
        raise RuntimeError("parser bug")


class _BrokenController(CodexController):
    def make_parser(self, request: StartRequest, resume_id: str | None) -> StreamParser:
        return _BrokenParser()


async def test_a_crashing_parser_still_ends_the_run_with_an_internal_error(
    tmp_path: Path,
) -> None:
    transcript = shared_transcript("codex_1.jsonl")
    config = CodexConfig(**fake_settings(tmp_path, transcript, FAKE_CLI_HANG_AFTER="3"))
    async with _BrokenController(config) as ctl:
        await ctl.start(start_request(tmp_path))
        events = await collect(ctl)
        result = await ctl.wait()

    assert isinstance(events[-1], Failed)
    assert result.error is not None and result.error.code is ErrorCode.INTERNAL_ERROR
    assert await wait_pid_gone(fake_log(tmp_path, "argv")[0]["pid"])
