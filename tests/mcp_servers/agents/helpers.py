"""Shared helpers for the controller tests: fixture paths, fake-CLI configs, event collection."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcp_servers.agents.controllers import AgentController
from mcp_servers.agents.events import AgentEvent

HERE = Path(__file__).parent
FAKE_CLI = HERE / "fake_cli.py"
LOCAL_TRANSCRIPTS = HERE / "transcripts"
# Real captures of Claude Code and Codex runs (provenance in SOURCES.md there).
RECORDED_TRANSCRIPTS = Path(__file__).parents[2] / "fixtures" / "controllers"

FAST_STOP = {
    "exit_grace_s": 0.5,
    "term_grace_s": 0.5,
    "interrupt_grace_s": 2.0,
}


def shared_transcript(name: str) -> Path:
    """A recorded transcript from tests/fixtures/controllers (a missing one is an error)."""
    path = RECORDED_TRANSCRIPTS / name
    if not path.is_file():
        raise FileNotFoundError(f"recorded transcript {name} is not in {RECORDED_TRANSCRIPTS}")
    return path


def read_lines(path: Path) -> list[str]:
    """The transcript's lines without newlines."""
    return path.read_text(encoding="utf-8").splitlines()


def fake_settings(tmp_path: Path, transcript: Path | None, **env: str) -> dict[str, Any]:
    """Config fields that run the fake CLI under this interpreter, logging to tmp_path."""
    fake_env = {"FAKE_CLI_LOG": str(tmp_path / "fake.log")}
    if transcript is not None:
        fake_env["FAKE_CLI_TRANSCRIPT"] = str(transcript)
    fake_env.update(env)
    return {
        "executable": sys.executable,
        "prefix_args": (str(FAKE_CLI),),
        "env": fake_env,
        "trace_dir": tmp_path / "traces",
        **FAST_STOP,
    }


def fake_log(tmp_path: Path, kind: str) -> list[dict[str, Any]]:
    """The fake CLI's log records of one kind ('argv', 'stdin', 'child')."""
    path = tmp_path / "fake.log"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if r["kind"] == kind]


def stdin_messages(tmp_path: Path) -> list[dict[str, Any]]:
    """The JSON messages the fake CLI received on stdin."""
    return [json.loads(r["line"]) for r in fake_log(tmp_path, "stdin")]


async def collect(
    controller: AgentController,
    on_event: Callable[[AgentEvent], Any] | None = None,
    timeout_s: float = 30.0,
) -> list[AgentEvent]:
    """Every event of the current run; `on_event` (sync or async) sees each as it arrives."""
    events: list[AgentEvent] = []
    with anyio.fail_after(timeout_s):
        async for event in controller.stream():
            events.append(event)
            if on_event is not None:
                outcome = on_event(event)
                if hasattr(outcome, "__await__"):
                    await outcome
    return events


async def wait_pid_gone(pid: int, timeout_s: float = 10.0) -> bool:
    """Wait (on a pidfd, no polling) until `pid` has terminated; True once it has.

    A terminated process may linger as a zombie until its parent reaps it; that counts as gone.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        with anyio.move_on_after(timeout_s):
            await anyio.wait_readable(pidfd)
            return True
        return False
    finally:
        os.close(pidfd)
