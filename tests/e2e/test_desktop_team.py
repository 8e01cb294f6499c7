"""Delegate and keep talking, in the window, against the real sidecar with a scripted model.

An author delegates a task on one thread; the task works in the background (its scripted model
answers only once released) while the author chats on in the same thread, the composer never
busy; the author moves to a new thread; the task ends there in the background: the run tree
marks the first thread's plan unread, and going back shows the plan's report as a row of its
own with the main agent's answer under it. From the run tree the task's transcript, activity
and messages open, and they come back the same after the window and the sidecar restart. A
strong agent's (the fake Claude Code CLI replaying a recorded run) raw and normalized trace
files open from its task's messages in a read-only viewer."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.models.transcript_entries import AnnouncementEntry, MessageEntry
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.form_dialog import FormDialog
from desktop.views.run_tree import (
    OPEN_TRANSCRIPT,
    SHOW_ACTIVITY,
    SHOW_MESSAGES,
    STATUS,
    RunTreePanel,
)
from desktop.views.run_tree_rows import UNREAD_MARK
from desktop.views.sub_thread_dialog import SubThreadDialog
from desktop.views.task_activity_dialog import TaskActivityDialog
from desktop.views.task_messages_dialog import TaskMessagesDialog
from desktop.views.trace_viewer import TraceViewerDialog
from tests.e2e.test_delegation_background import FAST, FINDINGS, Team
from tests.e2e.test_desktop_coordinator import (
    COLD,
    _click,
    _desktop_warnings,
    _run_done,
    _run_tree,
    _send_for_dialog,
    _type_and_send,
)
from tests.e2e.test_sidecar_model import model_env
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.mcp_servers.agents.helpers import FAKE_CLI, shared_transcript

pytestmark = pytest.mark.slow

DELEGATE = "/delegate general Summarize my notes"
ASKED = "How are you?"
HELLO = "Hello! The summary is on its way."
TOLD = "Your summary is ready: " + FINDINGS


@pytest.fixture
def team() -> Team:
    return Team()


@pytest.fixture
def model(team: Team) -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        server.fallback = team
        yield server


@pytest.fixture
def environment(workspace: Path, model: ScriptedModelServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **model_env(model),
        **FAST,
    )
    return env


def _start(qtbot: QtBot, data: Path, environment: dict[str, str]) -> DesktopApp:
    desktop = build_desktop(data, environment)
    qtbot.addWidget(desktop.window)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=COLD):
        desktop.start()
    return desktop


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, environment: dict[str, str]) -> Iterator[DesktopApp]:
    desktop = _start(qtbot, tmp_path / "data", environment)
    yield desktop
    desktop.shutdown()


@pytest.fixture
def restart(
    qtbot: QtBot, tmp_path: Path, environment: dict[str, str]
) -> Iterator[Callable[[], DesktopApp]]:
    """Starts the window and its sidecar again on the same data folder."""
    started: list[DesktopApp] = []

    def start() -> DesktopApp:
        started.append(_start(qtbot, tmp_path / "data", environment))
        return started[-1]

    yield start
    for desktop in started:
        desktop.shutdown()


def _said(app: DesktopApp) -> list[tuple[str, str]]:
    """The transcript's messages: (kind of row, its text or its header)."""
    rows = [e for e in app.state.transcript.entries if isinstance(e, MessageEntry)]
    return [
        ("result", e.header) if isinstance(e, AnnouncementEntry) else (e.role, e.text) for e in rows
    ]


def _not_busy(app: DesktopApp) -> bool:
    composer = app.window.composer
    return (
        composer.editor.isEnabled()
        and composer.send_button.text() == "Send"
        and not app.state.run_state().is_running
    )


def _open(qtbot: QtBot, panel: RunTreePanel, plan_id: str, task_id: str, text: str) -> object:
    """Choose `text` in the task's menu in the run tree; returns the dialog it shows."""
    item = panel.task_item(plan_id, task_id)
    assert item is not None
    menu = panel.task_menu(item)
    assert menu is not None
    [action] = [a for a in menu.actions() if a.text() == text]
    assert action.isEnabled(), f"{text} is disabled"
    with qtbot.waitSignal(panel.task_dialog_opened, timeout=COLD) as opened:
        action.trigger()
    return (opened.args or [None])[0]


def _what_the_task_did(qtbot: QtBot, app: DesktopApp, plan_id: str, task_id: str) -> None:
    """Its activity, messages and transcript, opened from the run tree, tell its findings."""
    panel = _run_tree(app.window)
    activity = _open(qtbot, panel, plan_id, task_id, SHOW_ACTIVITY)
    assert isinstance(activity, TaskActivityDialog)
    qtbot.waitUntil(lambda: any(FINDINGS in text for text, _ in activity.lines()), timeout=COLD)
    messages = _open(qtbot, panel, plan_id, task_id, SHOW_MESSAGES)
    assert isinstance(messages, TaskMessagesDialog)
    qtbot.waitUntil(lambda: bool(messages.lines), timeout=COLD)
    [result] = [line for line in messages.lines if line.envelope.kind == "final"]
    assert (result.header, result.body) == ("Result: succeeded", FINDINGS)
    transcript = _open(qtbot, panel, plan_id, task_id, OPEN_TRANSCRIPT)
    assert isinstance(transcript, SubThreadDialog)
    qtbot.waitUntil(lambda: FINDINGS in transcript.transcript.plain_text(), timeout=COLD)
    assert "Task: " in transcript.transcript.plain_text()
    for dialog in (activity, messages, transcript):
        dialog.close()


def test_an_author_keeps_talking_while_a_delegated_task_works_and_reads_its_result_later(
    qtbot: QtBot,
    app: DesktopApp,
    team: Team,
    restart: Callable[[], DesktopApp],
    caplog: pytest.LogCaptureFixture,
):
    window = app.window
    _type_and_send(qtbot, window, DELEGATE)
    qtbot.waitUntil(lambda: app.state.selected_thread_id is not None, timeout=COLD)
    first = app.state.selected_thread_id
    assert first is not None
    panel = _run_tree(window)
    tree = panel.model
    qtbot.waitUntil(lambda: bool(tree.plans) and _run_done(app), timeout=COLD)
    plan = tree.plans[-1]
    [task_id] = [node.info.id for node in tree.tasks(plan.id)]
    assert plan.status == "running" and _not_busy(app)

    # The author talks on while the task works: answered at once, never queued.
    _type_and_send(qtbot, window, ASKED)
    qtbot.waitUntil(lambda: _said(app)[-1] == ("assistant", HELLO) and _run_done(app), timeout=COLD)
    assert tree.plans[-1].status == "running" and _not_busy(app)

    # Elsewhere when the task ends: its plan is unread under the first thread's title.
    _click(qtbot, window.thread_list.new_button)
    qtbot.waitUntil(lambda: app.state.selected_thread_id not in (None, first), timeout=COLD)
    second = app.state.selected_thread_id
    team.release.set()
    qtbot.waitUntil(lambda: tree.is_unread(plan.id), timeout=COLD)
    group, row = panel.thread_item(first), panel.plan_item(plan.id)
    assert group is not None and row is not None and row.parent() is group
    assert group.text(0) == DELEGATE and "1 unread" in group.text(STATUS)
    assert row.text(0).startswith(UNREAD_MARK) and row.text(STATUS) == "completed"
    qtbot.waitUntil(lambda: app.state.run_state(first).status == "idle", timeout=COLD)
    assert app.state.selected_thread_id == second and _said(app) == []

    # Back on the first thread: read; the report is a row of its own, then the agent's answer.
    window.thread_list.select_thread(first)
    header = f"Plan “{plan.goal}” finished: completed"  # the author knows it by its goal
    qtbot.waitUntil(
        lambda: _said(app)[-2:] == [("result", header), ("assistant", TOLD)], timeout=COLD
    )
    assert not tree.is_unread(plan.id)
    [announced] = [e for e in app.state.transcript.entries if isinstance(e, AnnouncementEntry)]
    assert FINDINGS in announced.plans[0].report
    _what_the_task_did(qtbot, app, plan.id, task_id)

    # After a restart of the window and the sidecar, all of it comes back.
    app.shutdown()
    again = restart()
    again_tree = _run_tree(again.window).model
    qtbot.waitUntil(lambda: again_tree.plan(plan.id) is not None, timeout=COLD)
    again.window.thread_list.select_thread(first)
    qtbot.waitUntil(
        lambda: _said(again)[-2:] == [("result", header), ("assistant", TOLD)], timeout=COLD
    )
    assert _said(again)[0] == ("user", DELEGATE)
    qtbot.waitUntil(lambda: again_tree.task(plan.id, task_id) is not None, timeout=COLD)
    _what_the_task_did(qtbot, again, plan.id, task_id)
    assert _desktop_warnings(caplog) == []


@pytest.fixture
def strong_app(qtbot: QtBot, tmp_path: Path, environment: dict[str, str]) -> Iterator[DesktopApp]:
    """The window over a sidecar whose Claude Code is the fake CLI replaying a recorded run."""
    claude = tmp_path / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
    claude.chmod(0o755)
    env = environment | {
        "ATRIUM_CLAUDE_BIN": str(claude),
        "FAKE_CLI_TRANSCRIPT": str(shared_transcript("claude_1.jsonl")),
        "FAKE_CLI_LOG": str(tmp_path / "fake.log"),
    }
    desktop = _start(qtbot, tmp_path / "data", env)
    yield desktop
    desktop.shutdown()


def test_a_strong_agents_raw_and_normalized_traces_open_from_its_task(
    qtbot: QtBot, strong_app: DesktopApp, caplog: pytest.LogCaptureFixture
):
    window = strong_app.window
    asks = _send_for_dialog(qtbot, window, "/delegate claude Write hello.txt saying hi")
    assert isinstance(asks, ApprovalDialog)  # the review gate asks before a writer starts
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=COLD) as opened:
        _click(qtbot, asks.allow_once_button)
    form = (opened.args or [None])[0]
    assert isinstance(form, FormDialog)  # the CLI's permission request
    _click(qtbot, form.submit_button)
    panel = _run_tree(window)
    tree = panel.model
    qtbot.waitUntil(lambda: bool(tree.plans) and tree.plans[-1].status == "completed", timeout=COLD)
    plan = tree.plans[-1]
    [node] = tree.tasks(plan.id)

    messages = _open(qtbot, panel, plan.id, node.info.id, SHOW_MESSAGES)
    assert isinstance(messages, TaskMessagesDialog)
    qtbot.waitUntil(lambda: bool(messages.traces), timeout=COLD)
    assert set(messages.traces) == {"raw", "normalized"}
    for kind, path in messages.traces.items():
        button = messages.trace_buttons[kind]
        with qtbot.waitSignal(panel.task_dialog_opened, timeout=COLD) as opened:
            _click(qtbot, button)
        viewer = (opened.args or [None])[0]
        assert isinstance(viewer, TraceViewerDialog) and viewer.path == path
        qtbot.waitUntil(lambda v=viewer: v.size_label.text() != "Reading…", timeout=COLD)
        shown = viewer.text_view.toPlainText()
        assert shown and shown == Path(path).read_text(encoding="utf-8", errors="replace")
        assert viewer.text_view.isReadOnly() and not viewer.error_label.isVisible()
    assert _desktop_warnings(caplog) == []
