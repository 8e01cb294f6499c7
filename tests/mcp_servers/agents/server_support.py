"""Helpers for the agents-server tests: hand-built Claude transcripts, progress and elicitation
recorders, and a controller factory that runs the fake CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.types import ElicitRequestParams, ElicitResult

from mcp_servers.agents.controllers import (
    AgentController,
    ClaudeCodeConfig,
    ClaudeCodeController,
    CodexConfig,
    CodexController,
    OpenClawConfig,
    OpenClawController,
)
from mcp_servers.agents.runs import ControllerFactory
from tests.mcp_servers.agents.helpers import fake_settings

SESSION = "5b0c7e1a-2222-4c2e-9d7a-aa0000000002"
WRITE_INPUT = {"file_path": "/work/hello.txt", "content": "hi"}


def _assistant(block: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        },
        "parent_tool_use_id": None,
        "session_id": SESSION,
    }


def permission_transcript(final_text: str = "Wrote hello.txt.") -> list[dict[str, Any]]:
    """A Claude run that asks to use Write (request id `perm-1`), then answers `final_text`."""
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": WRITE_INPUT}
    request = {
        "subtype": "can_use_tool",
        "tool_name": "Write",
        "input": WRITE_INPUT,
        "tool_use_id": "toolu_1",
        "description": "hello.txt",
    }
    tool_result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "written"}],
        },
        "parent_tool_use_id": None,
        "session_id": SESSION,
    }
    return [
        {"type": "system", "subtype": "init", "session_id": SESSION, "cwd": "/work",
         "tools": ["Write"], "model": "claude-test", "permissionMode": "default"},
        _assistant(tool_use, "msg_1"),
        {"type": "control_request", "request_id": "perm-1", "request": request},
        tool_result,
        _assistant({"type": "text", "text": final_text}, "msg_2"),
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 12,
         "num_turns": 2, "result": final_text, "session_id": SESSION, "total_cost_usd": 0.001,
         "usage": {"input_tokens": 6, "output_tokens": 4}, "permission_denials": []},
    ]  # fmt: skip


def write_transcript(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write JSON lines to `path` and return it."""
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def fake_factory(tmp_path: Path, transcript: Path | None, **env: str) -> ControllerFactory:
    """Controllers that run the fake CLI (logging to tmp_path) instead of the real one."""
    settings = fake_settings(tmp_path, transcript, **env)

    def build(provider: str, executable: str) -> AgentController:
        if provider == "claude":
            return ClaudeCodeController(ClaudeCodeConfig(**settings))
        if provider == "codex":
            return CodexController(CodexConfig(**settings))
        return OpenClawController(OpenClawConfig(**settings))

    return build


class ProgressLog:
    """A progress callback that keeps every message (parsed JSON) and lets tests wait on them."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.values: list[float] = []
        self._changed = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        assert message is not None
        self.values.append(progress)
        self.messages.append(json.loads(message))
        self._changed.set()
        self._changed = anyio.Event()

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("type") == kind]

    async def heartbeat_after(self, kind: str) -> dict[str, Any]:
        """A heartbeat sent after the first message of type `kind` (the CLI is then quiet)."""
        first = await self.wait_for(lambda m: m.get("type") == kind)
        index = self.messages.index(first)
        return await self.wait_for(lambda m: m.get("type") == "heartbeat", after=index + 1)

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], *, after: int = 0
    ) -> dict[str, Any]:
        """The first message from index `after` on matching `predicate`, waiting for it."""
        seen = after
        while True:
            for message in self.messages[seen:]:
                if predicate(message):
                    return message
            seen = len(self.messages)
            await self._changed.wait()


class Elicitations:
    """An elicitation callback answering with a fixed result and recording what was asked."""

    def __init__(self, answer: ElicitResult) -> None:
        self.answer = answer
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        return self.answer


def group_alive(pgid: int) -> bool:
    """Whether any process of the group `pgid` still exists."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
