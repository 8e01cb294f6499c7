"""ClaudeCodeController against a fake `claude` that replays real transcripts over real pipes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_servers.agents.controllers import ClaudeCodeConfig, ClaudeCodeController
from mcp_servers.agents.errors import (
    InvalidDecisionError,
    RunInProgressError,
    UnknownPermissionRequestError,
)
from mcp_servers.agents.events import (
    AgentEvent,
    Completed,
    Failed,
    Heartbeat,
    MessageCompleted,
    PermissionRequest,
    SessionStarted,
    StateHint,
    load_event,
)
from mcp_servers.agents.requests import (
    AllowTool,
    AnswerQuestion,
    Attachment,
    DenyTool,
    PermissionDecision,
    ResumeRequest,
    StartRequest,
)
from mcp_servers.agents.results import ErrorCode, OperatorResult
from tests.mcp_servers.agents.fake_cli import BIG_TEXT_BYTES
from tests.mcp_servers.agents.helpers import (
    LOCAL_TRANSCRIPTS,
    collect,
    fake_log,
    fake_settings,
    read_lines,
    shared_transcript,
    stdin_messages,
)

pytestmark = pytest.mark.anyio


def controller(tmp_path: Path, transcript: Path | None, **options: Any) -> ClaudeCodeController:
    env = {k: v for k, v in options.items() if k.startswith("FAKE_CLI_")}
    settings = fake_settings(tmp_path, transcript, **env)
    settings.update({k: v for k, v in options.items() if not k.startswith("FAKE_CLI_")})
    return ClaudeCodeController(ClaudeCodeConfig(**settings))


def start_request(tmp_path: Path, **fields: Any) -> StartRequest:
    return StartRequest(
        session_id="atrium-1", working_dir=tmp_path, instruction="write hello.txt", **fields
    )


async def run_answering(
    ctl: ClaudeCodeController, request: StartRequest, decision: PermissionDecision
) -> tuple[list[AgentEvent], OperatorResult]:
    await ctl.start(request)

    async def answer(event: AgentEvent) -> None:
        if isinstance(event, PermissionRequest):
            await ctl.answer_permission(event.request_id, decision)

    events = await collect(ctl, answer)
    return events, await ctl.wait()


async def test_allowed_permission_is_answered_with_the_original_input(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("claude_1.jsonl")) as ctl:
        events, result = await run_answering(ctl, start_request(tmp_path), AllowTool())

    received = stdin_messages(tmp_path)
    assert received[0]["type"] == "user"
    assert received[0]["message"] == {"role": "user", "content": "write hello.txt"}
    assert received[1] == {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": "0a796fa8-74c6-4c82-82a7-fb161e77a51b",
            "response": {
                "behavior": "allow",
                "updatedInput": {"file_path": "C:\\work\\repo\\hello.txt", "content": "hi"},
            },
        },
    }
    assert (
        StateHint(
            hint="permission_answered",
            detail={"request_id": "0a796fa8-74c6-4c82-82a7-fb161e77a51b", "behavior": "allow"},
        )
        in events
    )
    assert isinstance(events[-1], Completed)
    assert result.status == "success"
    assert result.session is not None
    assert result.session.session_id == "25f505f3-79a7-4119-8ffa-23ce6efc7560"
    assert result.exit_code == 0
    assert [a.path for a in result.artifacts] == ["C:\\work\\repo\\hello.txt"]


async def test_allowed_permission_can_carry_an_edited_input(tmp_path: Path) -> None:
    edited = {"file_path": "C:\\work\\repo\\hello.txt", "content": "edited by the author"}
    async with controller(tmp_path, shared_transcript("claude_1.jsonl")) as ctl:
        await run_answering(ctl, start_request(tmp_path), AllowTool(updated_input=edited))

    response = stdin_messages(tmp_path)[1]["response"]["response"]
    assert response == {"behavior": "allow", "updatedInput": edited}


async def test_denied_permission_sends_the_deny_message(tmp_path: Path) -> None:
    decision = DenyTool(message="no user is available; permission denied")
    async with controller(tmp_path, shared_transcript("claude_2.jsonl")) as ctl:
        _, result = await run_answering(ctl, start_request(tmp_path), decision)

    assert stdin_messages(tmp_path)[1]["response"] == {
        "subtype": "success",
        "request_id": "68b4702e-6725-4f2d-abd1-243b51fea3be",
        "response": {"behavior": "deny", "message": "no user is available; permission denied"},
    }
    assert result.status == "success"
    assert [d.tool_name for d in result.permission_denials] == ["Write"]


async def test_ask_user_question_is_answered_with_the_authors_choice(tmp_path: Path) -> None:
    decision = AnswerQuestion(answers={"Which greeting should the file hold?": "hello"})
    async with controller(tmp_path, LOCAL_TRANSCRIPTS / "claude_ask_user.jsonl") as ctl:
        _, result = await run_answering(ctl, start_request(tmp_path), decision)

    updated = stdin_messages(tmp_path)[1]["response"]["response"]["updatedInput"]
    assert updated["answers"] == {"Which greeting should the file hold?": "hello"}
    assert updated["questions"][0]["question"] == "Which greeting should the file hold?"
    assert result.final_message == "You chose hello."


async def test_unknown_and_unfitting_permission_answers_are_refused(tmp_path: Path) -> None:
    async with controller(tmp_path, shared_transcript("claude_1.jsonl")) as ctl:
        await ctl.start(start_request(tmp_path))
        with pytest.raises(RunInProgressError):
            await ctl.start(start_request(tmp_path))
        with pytest.raises(UnknownPermissionRequestError):
            await ctl.answer_permission("never-asked", AllowTool())

        async def answer(event: AgentEvent) -> None:
            if isinstance(event, PermissionRequest):
                with pytest.raises(InvalidDecisionError):
                    await ctl.answer_permission(event.request_id, AnswerQuestion(answers={}))
                await ctl.answer_permission(event.request_id, AllowTool())
                with pytest.raises(UnknownPermissionRequestError):
                    await ctl.answer_permission(event.request_id, AllowTool())

        await collect(ctl, answer)
        assert (await ctl.wait()).status == "success"


async def test_heartbeats_flow_while_a_permission_is_pending(tmp_path: Path) -> None:
    async with controller(
        tmp_path, shared_transcript("claude_1.jsonl"), heartbeat_interval_s=0.05
    ) as ctl:
        await ctl.start(start_request(tmp_path))
        pending: list[PermissionRequest] = []

        async def answer_after_heartbeat(event: AgentEvent) -> None:
            if isinstance(event, PermissionRequest):
                pending.append(event)
            elif isinstance(event, Heartbeat) and pending:
                await ctl.answer_permission(pending.pop().request_id, AllowTool())

        events = await collect(ctl, answer_after_heartbeat)

    assert any(isinstance(e, Heartbeat) for e in events)
    assert isinstance(events[-1], Completed)


async def test_interrupt_sends_the_control_request_and_ends_interrupted(tmp_path: Path) -> None:
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_HANG_AFTER="2"
    ) as ctl:
        await ctl.start(start_request(tmp_path))

        async def interrupt_on_message(event: AgentEvent) -> None:
            if isinstance(event, MessageCompleted):
                await ctl.interrupt()

        events = await collect(ctl, interrupt_on_message)
        result = await ctl.wait()

    interrupts = [m for m in stdin_messages(tmp_path) if m["type"] == "control_request"]
    assert [m["request"] for m in interrupts] == [{"subtype": "interrupt"}]
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.status == "interrupted"
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    # The CLI ended its turn and exited on EOF: no signal was needed.
    assert result.exit_code == 0


async def test_timeout_stops_a_stalled_cli(tmp_path: Path) -> None:
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_HANG_AFTER="1"
    ) as ctl:
        # Long enough for the stand-in CLI to start and print its session on a loaded machine.
        await ctl.start(start_request(tmp_path, timeout_s=3.0))
        events = await collect(ctl)
        result = await ctl.wait()

    assert isinstance(events[0], SessionStarted)
    assert result.status == "timeout"
    assert result.error is not None
    assert (result.error.code, result.error.detail["idle"]) == (ErrorCode.TIMEOUT, False)


async def test_idle_timeout_stops_a_silent_cli(tmp_path: Path) -> None:
    async with controller(
        tmp_path,
        shared_transcript("claude_4.jsonl"),
        FAKE_CLI_HANG_AFTER="1",
        FAKE_CLI_IGNORE_SIGNALS="1",
    ) as ctl:
        await ctl.start(start_request(tmp_path, idle_timeout_s=0.3))
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "timeout"
    assert result.error is not None
    assert result.error.detail["idle"] is True


async def test_failed_resume_falls_back_to_a_fresh_start(tmp_path: Path) -> None:
    request = ResumeRequest(
        session_id="atrium-1",
        working_dir=tmp_path,
        instruction="continue",
        native_session_id="gone-session",
    )
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_RESUME_FAILS="1"
    ) as ctl:
        await ctl.resume(request)
        events = await collect(ctl)
        result = await ctl.wait()

    argvs = [r["argv"] for r in fake_log(tmp_path, "argv")]
    assert len(argvs) == 2
    assert argvs[0][argvs[0].index("--resume") + 1] == "gone-session"
    assert "--resume" not in argvs[1]
    hint = next(e for e in events if isinstance(e, StateHint) and e.hint == "resume_failed")
    assert hint.detail["session_id"] == "gone-session"
    assert [(a.mode, a.outcome) for a in result.attempts] == [
        ("resume", "resume_failed"),
        ("start", "completed"),
    ]
    assert result.attempts[0].exit_code == 1
    assert result.status == "success"
    assert result.session is not None
    assert result.session.session_id == "1d1e46f9-35c7-4834-b529-846d5bb82288"


async def test_failed_resume_without_fallback_fails_with_resume_failed(tmp_path: Path) -> None:
    request = ResumeRequest(
        session_id="atrium-1",
        working_dir=tmp_path,
        instruction="continue",
        native_session_id="gone-session",
        fallback_to_start=False,
    )
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_RESUME_FAILS="1"
    ) as ctl:
        await ctl.resume(request)
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.RESUME_FAILED
    assert len(fake_log(tmp_path, "argv")) == 1


async def test_oversized_blank_and_non_json_lines_are_survived(tmp_path: Path) -> None:
    transcript = shared_transcript("claude_4.jsonl")
    async with controller(tmp_path, transcript, FAKE_CLI_EXTRA_LINES="1") as ctl:
        await ctl.start(start_request(tmp_path))
        events = await collect(ctl)
        result = await ctl.wait()

    big = next(e for e in events if isinstance(e, MessageCompleted) and e.message_id == "msg_big")
    assert len(big.text) == BIG_TEXT_BYTES
    assert result.status == "success"
    assert result.final_message == "4"
    assert result.trace is not None
    raw = result.trace.raw_path.read_text(encoding="utf-8").splitlines()
    assert "[SandboxDebug] not json at all" in raw
    assert "" in raw
    assert any("non-JSON" in note for note in result.notes)


async def test_traces_hold_raw_stdout_events_stdin_and_result(tmp_path: Path) -> None:
    transcript = shared_transcript("claude_1.jsonl")
    async with controller(tmp_path, transcript) as ctl:
        events, result = await run_answering(ctl, start_request(tmp_path), AllowTool())

    trace = result.trace
    assert trace is not None
    assert trace.raw_path.parent == tmp_path / "traces"
    assert trace.raw_path.name == f"{result.run_id}.raw.jsonl"
    raw = [json.loads(line) for line in trace.raw_path.read_text(encoding="utf-8").splitlines()]
    echoes = [line for line in raw if line.get("isReplay") is True]
    assert [line for line in raw if line not in echoes] == [
        json.loads(line) for line in read_lines(transcript)
    ]
    logged = [load_event(line) for line in trace.normalized_path.read_text().splitlines()]
    assert logged == events
    stdin = [json.loads(line) for line in trace.stdin_path.read_text().splitlines()]
    assert stdin == stdin_messages(tmp_path)
    # The CLI echoed the prompt (--replay-user-messages) with the id the controller gave it.
    assert [echo["uuid"] for echo in echoes] == [stdin[0]["uuid"]]
    assert OperatorResult.model_validate_json(trace.result_path.read_text()) == result


async def test_missing_cli_ends_the_run_with_cli_not_found(tmp_path: Path) -> None:
    config = ClaudeCodeConfig(executable=str(tmp_path / "no-claude"), trace_dir=tmp_path)
    async with ClaudeCodeController(config) as ctl:
        await ctl.start(start_request(tmp_path))
        events = await collect(ctl)
        result = await ctl.wait()

    assert isinstance(events[-1], Failed)
    assert result.error is not None and result.error.code is ErrorCode.CLI_NOT_FOUND


async def test_leaving_the_context_stops_an_active_run(tmp_path: Path) -> None:
    ctl = controller(tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_HANG_AFTER="1")
    with anyio.fail_after(20):
        async with ctl:
            await ctl.start(start_request(tmp_path))
    assert ctl.result is not None
    assert ctl.result.status == "interrupted"


async def test_images_go_inline_and_other_attachments_are_listed(tmp_path: Path) -> None:
    image = tmp_path / "cover.png"
    image.write_bytes(b"\x89PNG fake")
    notes = tmp_path / "notes.md"
    missing = tmp_path / "missing.jpg"
    attachments = [Attachment(path=image), Attachment(path=notes), Attachment(path=missing)]
    async with controller(tmp_path, shared_transcript("claude_4.jsonl")) as ctl:
        await ctl.start(start_request(tmp_path, attachments=attachments))
        await collect(ctl)
        result = await ctl.wait()

    content = stdin_messages(tmp_path)[0]["message"]["content"]
    assert content[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORyBmYWtl"},
    }
    assert content[1] == {
        "type": "text",
        "text": f"write hello.txt\n\nAttached files:\n- {notes}\n- {missing}",
    }
    assert any(str(missing) in note for note in result.notes)


async def test_cli_hanging_after_its_result_is_terminated_and_the_run_succeeds(
    tmp_path: Path,
) -> None:
    async with controller(
        tmp_path, shared_transcript("claude_4.jsonl"), FAKE_CLI_LINGER="1"
    ) as ctl:
        await ctl.start(start_request(tmp_path))
        events = await collect(ctl)
        result = await ctl.wait()

    assert isinstance(events[-1], Completed)
    assert result.status == "success"
    assert result.exit_code == -15  # SIGTERM after the exit grace
