"""Command lines, tool-policy mapping and environments the controllers build (no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.agents.controllers import (
    ClaudeCodeConfig,
    ClaudeCodeController,
    CodexController,
    OpenClawConfig,
    OpenClawController,
    build_controller,
)
from mcp_servers.agents.requests import Attachment, StartRequest, ToolPolicy
from mcp_servers.agents.traces import default_trace_dir


def request(tmp_path: Path, **fields: object) -> StartRequest:
    return StartRequest.model_validate(
        {"session_id": "s", "working_dir": tmp_path, "instruction": "do it", **fields}
    )


def test_claude_command_uses_stream_json_on_both_sides_with_stdio_permissions(
    tmp_path: Path,
) -> None:
    ctl = ClaudeCodeController(ClaudeCodeConfig(executable="/opt/claude", extra_args=("--x",)))

    argv = ctl.build_argv(request(tmp_path, model="sonnet", max_turns=3), "sess-1")

    assert argv[0] == "/opt/claude"
    joined = " ".join(argv)
    assert "--output-format stream-json --verbose --input-format stream-json" in joined
    assert "--replay-user-messages" in argv  # how the controller sees messages taken
    assert "--permission-prompt-tool stdio" in joined
    assert "--permission-mode acceptEdits" in joined
    assert "--model sonnet" in joined
    assert "--max-turns 3" in joined
    assert "--resume sess-1" in joined
    assert "-p" not in argv
    assert argv[-1] == "--x"


def test_claude_read_only_policy_disallows_file_editing_tools(tmp_path: Path) -> None:
    ctl = ClaudeCodeController()
    policy = ToolPolicy(mode="read_only", allowed_tools=("Read",), disallowed_tools=("Bash",))

    argv = ctl.build_argv(request(tmp_path, tool_policy=policy), None)

    assert argv[argv.index("--permission-mode") + 1] == "default"
    assert argv[argv.index("--allowedTools") + 1] == "Read"
    disallowed = argv[argv.index("--disallowedTools") + 1].split(",")
    assert disallowed == ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"]
    applied = ctl.applied_policy(request(tmp_path, tool_policy=policy))
    assert applied.can_ask_permission is True


def test_claude_full_access_bypasses_permissions_and_cannot_ask(tmp_path: Path) -> None:
    ctl = ClaudeCodeController(ClaudeCodeConfig(bypass_permissions=True))
    full = request(tmp_path, tool_policy=ToolPolicy(mode="full_access"))

    argv = ctl.build_argv(full, None)

    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"
    assert ctl.applied_policy(full).can_ask_permission is False


def test_claude_full_access_as_root_pre_allows_tools_instead_of_bypassing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code exits with "--dangerously-skip-permissions cannot be used with root/sudo
    # privileges" when given bypassPermissions as root (seen with 2.1.197).
    monkeypatch.setattr("os.geteuid", lambda: 0)
    ctl = ClaudeCodeController()
    policy = ToolPolicy(mode="full_access", allowed_tools=("mcp__x__y",))
    full = request(tmp_path, tool_policy=policy)

    argv = ctl.build_argv(full, None)

    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    allowed = argv[argv.index("--allowedTools") + 1].split(",")
    assert allowed[0] == "mcp__x__y" and {"Bash", "Write", "WebFetch"} <= set(allowed)
    applied = ctl.applied_policy(full)
    assert applied.can_ask_permission is True
    assert applied.native[:2] == ("--permission-mode", "acceptEdits")


def test_claude_does_not_inherit_claude_code_session_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    ctl = ClaudeCodeController(ClaudeCodeConfig(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "100"}))

    env = ctl.child_env(request(tmp_path, env={"EXTRA": "yes"}))

    assert "CLAUDECODE" not in env
    assert "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "100"
    assert env["EXTRA"] == "yes"


@pytest.mark.parametrize(
    ("mode", "sandbox"),
    [
        ("read_only", "read-only"),
        ("workspace_write", "workspace-write"),
        ("full_access", "danger-full-access"),
    ],
)
def test_codex_maps_the_tool_policy_to_a_sandbox_and_says_it_cannot_ask(
    tmp_path: Path, mode: str, sandbox: str
) -> None:
    ctl = CodexController()
    req = request(tmp_path, tool_policy={"mode": mode})

    argv = ctl.build_argv(req, None)
    applied = ctl.applied_policy(req)

    assert argv[argv.index("--sandbox") + 1] == sandbox
    assert applied.native == ("--sandbox", sandbox)
    assert applied.can_ask_permission is False
    assert "cannot ask for approval" in applied.note


def test_codex_sends_images_as_one_image_flag_and_lists_other_attachments(tmp_path: Path) -> None:
    ctl = CodexController()
    attachments = [
        Attachment(path=tmp_path / "a.png"),
        Attachment(path=tmp_path / "b.jpg"),
        Attachment(path=tmp_path / "notes.md"),
    ]

    argv = ctl.build_argv(request(tmp_path, attachments=attachments), None)

    assert f"--image={tmp_path / 'a.png'},{tmp_path / 'b.jpg'}" in argv
    assert argv[-1] == f"do it\n\nAttached files:\n- {tmp_path / 'notes.md'}"
    assert argv[-2] == "--"


def test_codex_records_options_it_cannot_honour(tmp_path: Path) -> None:
    policy = ToolPolicy(allowed_tools=("Read",))

    notes = CodexController().notes(request(tmp_path, tool_policy=policy, max_turns=2))

    assert len(notes) == 2


def test_openclaw_start_uses_a_fresh_session_per_run_and_resume_the_given_one(
    tmp_path: Path,
) -> None:
    ctl = OpenClawController(OpenClawConfig(agent_id="writer", mode="local", thinking="low"))
    first, second = request(tmp_path), request(tmp_path)

    start_argv = ctl.build_argv(first, None)
    resume_argv = ctl.build_argv(first, "oc-7")

    session = start_argv[start_argv.index("--session-id") + 1]
    assert session == ctl.session_for(first, None)
    assert session != ctl.session_for(second, None)
    assert resume_argv[resume_argv.index("--session-id") + 1] == "oc-7"
    assert start_argv[:4] == ["openclaw", "agent", "--agent", "writer"]
    assert "--local" in start_argv
    assert start_argv[start_argv.index("--thinking") + 1] == "low"


def test_build_controller_picks_the_provider_and_executable(tmp_path: Path) -> None:
    claude = build_controller("claude", "/bin/claude-x", trace_dir=tmp_path)
    codex = build_controller("codex")

    assert isinstance(claude, ClaudeCodeController)
    assert claude.config.executable == "/bin/claude-x"
    assert claude.config.trace_dir == tmp_path
    assert isinstance(codex, CodexController)
    assert codex.config.executable == "codex"
    assert isinstance(build_controller("openclaw"), OpenClawController)


def test_default_trace_dir_lives_under_the_atrium_data_dir(data_dir: Path) -> None:
    assert default_trace_dir() == data_dir / "traces"
