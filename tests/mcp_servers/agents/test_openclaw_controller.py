"""OpenClawController against a fake `openclaw` printing log lines and a JSON document."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_servers.agents.controllers import OpenClawConfig, OpenClawController
from mcp_servers.agents.controllers.openclaw_state import model_from_settings
from mcp_servers.agents.errors import RunInProgressError
from mcp_servers.agents.events import Completed, Failed, MessageCompleted, SessionStarted
from mcp_servers.agents.requests import PolicyMode, ResumeRequest, StartRequest, ToolPolicy
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import (
    LOCAL_TRANSCRIPTS,
    collect,
    fake_log,
    fake_settings,
    wait_pid_gone,
)

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


# -- isolation, model and policy, mode choice ------------------------------------------------


async def test_each_session_runs_in_its_own_state_folder_with_atriums_workspace_and_model(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = {
        "ATRIUM_MODEL": "anthropic/claude-sonnet-4-5",
        "ATRIUM_MODEL_API_BASE": "http://127.0.0.1:9/v1",
        "ATRIUM_MODEL_API_KEY": "sk-one-key",
    }
    ctl = controller(tmp_path, LOCAL_TRANSCRIPTS / "openclaw_real_plain.txt", **settings)
    request = StartRequest(
        session_id="atrium-3",
        working_dir=work,
        instruction="x",
        tool_policy=ToolPolicy(mode="read_only", disallowed_tools=("browser",)),
    )
    async with ctl:
        await ctl.start(request)
        await collect(ctl)
        result = await ctl.wait()

    session = ctl.session_for(request, None)
    state = tmp_path / "openclaw-state" / session
    config = json.loads((state / ".openclaw" / "openclaw.json").read_text())
    assert config["agents"]["defaults"]["workspace"] == str(work)
    assert config["agents"]["defaults"]["skipBootstrap"] is True
    assert config["agents"]["defaults"]["model"] == {"primary": "atrium/claude-sonnet-4-5"}
    provider = config["models"]["providers"]["atrium"]
    assert (provider["api"], provider["baseUrl"], provider["apiKey"]) == (
        "anthropic-messages",
        "http://127.0.0.1:9",
        "sk-one-key",
    )
    assert config["update"] == {"checkOnStart": False}
    assert {"write", "edit", "apply_patch", "group:runtime", "browser"} <= set(
        config["tools"]["deny"]
    )
    assert "--local" in fake_log(tmp_path, "argv")[0]["argv"]
    assert result.policy is not None and result.policy.native[0] == "tools.deny"
    assert "cannot ask for approval" in result.policy.note
    assert not list(work.iterdir())


def test_chat_completions_models_get_a_v1_base_and_their_provider_key() -> None:
    env = {"ATRIUM_MODEL": "openai/gpt-5", "OPENAI_API_KEY": "sk-openai"}

    model = model_from_settings(env)

    assert model is not None
    assert (model.api, model.base_url, model.model_id, model.api_key) == (
        "openai-completions",
        "https://api.openai.com/v1",
        "gpt-5",
        "sk-openai",
    )
    local = model_from_settings({"ATRIUM_MODEL_API_BASE": "http://localhost:11434"}, "qwen3")
    assert local is not None and local.base_url == "http://localhost:11434/v1"
    assert model_from_settings({}) is None


async def test_gateway_mode_without_a_token_fails_with_one_line_saying_why(
    tmp_path: Path,
) -> None:
    ctl = OpenClawController(
        OpenClawConfig(
            **fake_settings(tmp_path, None),
            mode="gateway",
            gateway_url="ws://127.0.0.1:9",
        )
    )
    request = StartRequest(session_id="atrium-3", working_dir=tmp_path, instruction="x")
    async with ctl:
        await ctl.start(request)
        events = await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed" and result.error is not None
    assert result.error.code is ErrorCode.CONFIGURATION
    assert result.error.message.startswith("OpenClaw Gateway needs a token: ")
    assert "\n" not in result.error.message
    assert isinstance(events[-1], Failed)
    assert fake_log(tmp_path, "argv") == []


async def test_gateway_mode_with_nothing_listening_fails_as_unreachable(tmp_path: Path) -> None:
    settings = fake_settings(tmp_path, None)
    ctl = OpenClawController(
        OpenClawConfig(
            **settings, mode="gateway", gateway_url="ws://127.0.0.1:9", gateway_token="t"
        )
    )
    request = StartRequest(session_id="atrium-3", working_dir=tmp_path, instruction="x")
    async with ctl:
        await ctl.start(request)
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "failed" and result.error is not None
    assert result.error.code is ErrorCode.MODEL_UNREACHABLE
    assert result.error.message.startswith("OpenClaw Gateway at ws://127.0.0.1:9: not reachable")


async def test_auto_mode_runs_embedded_when_the_configured_gateway_does_not_answer(
    tmp_path: Path,
) -> None:
    settings = fake_settings(tmp_path, LOCAL_TRANSCRIPTS / "openclaw_real_plain.txt")
    ctl = OpenClawController(
        OpenClawConfig(**settings, gateway_url="ws://127.0.0.1:9", gateway_token="t")
    )
    request = StartRequest(
        session_id="atrium-3",
        working_dir=tmp_path,
        instruction="x",
        tool_policy=ToolPolicy(mode="read_only"),
    )
    async with ctl:
        await ctl.start(request)
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "success"
    assert "--local" in fake_log(tmp_path, "argv")[0]["argv"]
    assert any(
        n.startswith("OpenClaw Gateway at ws://127.0.0.1:9 not reachable") for n in result.notes
    )


@pytest.mark.parametrize("policy", ["workspace_write", "full_access"])
async def test_auto_mode_runs_a_task_that_may_write_embedded_in_its_own_folder(
    tmp_path: Path, policy: PolicyMode
) -> None:
    """A Gateway works in its own workspace, outside the review gate: in auto mode only
    read-only tasks go there, whatever the Gateway would answer."""
    settings = fake_settings(tmp_path, LOCAL_TRANSCRIPTS / "openclaw_real_plain.txt")
    ctl = OpenClawController(
        OpenClawConfig(**settings, gateway_url="ws://127.0.0.1:9", gateway_token="t")
    )
    request = StartRequest(
        session_id="atrium-4",
        working_dir=tmp_path,
        instruction="x",
        tool_policy=ToolPolicy(mode=policy),
    )
    async with ctl:
        await ctl.start(request)
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "success"
    assert "--local" in fake_log(tmp_path, "argv")[0]["argv"]
    assert [n for n in result.notes if "Gateway" in n] == [
        "a task that may write runs embedded (--local) in its own folder, so its changes pass "
        "the review gate; the OpenClaw Gateway at ws://127.0.0.1:9 serves read-only tasks"
    ]


async def test_a_second_start_while_a_run_is_going_is_refused(tmp_path: Path) -> None:
    transcript = LOCAL_TRANSCRIPTS / "openclaw_real_plain.txt"
    ctl = controller(tmp_path, transcript, FAKE_CLI_HANG_AFTER="1")
    request = StartRequest(session_id="atrium-3", working_dir=tmp_path, instruction="x")
    async with ctl:
        await ctl.start(request)
        with pytest.raises(RunInProgressError):
            await ctl.start(request.model_copy(update={"run_id": "second"}))
        await ctl.interrupt()
        await collect(ctl)
        result = await ctl.wait()

    assert result.status == "interrupted"


@pytest.mark.parametrize(
    ("behaviour", "exit_code"),
    [({}, 130), ({"FAKE_CLI_IGNORE_SIGNALS": "1"}, -9)],
    ids=["exits-on-sigint", "ignores-sigint-and-sigterm"],
)
async def test_a_stop_ends_the_cli_and_its_children_on_openclaws_own_short_ladder(
    tmp_path: Path, behaviour: dict[str, str], exit_code: int
) -> None:
    """A grandchild ignores SIGINT and SIGTERM and holds stdout open. The general graces are a
    minute, so the run can only end within the bound if the stop uses OpenClaw's own graces
    (SIGKILL by 1.5 s) and kills what is left of the group once the CLI itself is gone."""
    ready_socket = tmp_path / "ready.sock"
    settings = fake_settings(
        tmp_path,
        LOCAL_TRANSCRIPTS / "openclaw_real_plain.txt",
        FAKE_CLI_HANG_AFTER="0",
        FAKE_CLI_SPAWN_CHILD="1",
        FAKE_CLI_READY_SOCKET=str(ready_socket),
        **behaviour,
    )
    config = OpenClawConfig(**{**settings, "exit_grace_s": 60.0, "term_grace_s": 60.0})
    request = StartRequest(session_id="atrium-4", working_dir=tmp_path, instruction="x")
    listener = await anyio.create_unix_listener(ready_socket)
    async with listener, OpenClawController(config) as ctl:
        await ctl.start(request)
        with anyio.fail_after(30):
            for _ in range(2):  # the CLI and its grandchild, each once it is set up
                await (await listener.accept()).aclose()
            await ctl.interrupt()
            await collect(ctl)
            result = await ctl.wait()

    [child] = fake_log(tmp_path, "child")
    [call] = fake_log(tmp_path, "argv")
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert result.exit_code == exit_code
    assert await wait_pid_gone(call["pid"])
    assert await wait_pid_gone(child["pid"])
