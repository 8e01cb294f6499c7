"""The real window (offscreen) over the real sidecar at the scale of a day's use: a 50,000-token
answer streamed from a scripted OpenAI-compatible model, and a thread of 100,000 messages that
opens at its end, reaches its first message and finds a word in message 17 with Ctrl+F."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.models.transcript import MAX_ROWS, MessageEntry
from sidecar.protocol import RunEventParams
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.slow

TOKENS = 50_000
TOKEN_CHARS = 4
SEEDED = 100_000
COLD_MS = 60_000


def long_answer(chars: int) -> str:
    """Prose-like Markdown of exactly `chars` characters: words, with a paragraph break now and
    then (as a model writes), ending in a word."""
    parts: list[str] = []
    size = n = 0
    while size < chars:
        word = f"word{n % 997}" + ("\n\n" if n % 61 == 60 else " ")
        parts.append(word)
        size += len(word)
        n += 1
    return "".join(parts)[: chars - 1] + "."


def _desktop(qtbot: QtBot, tmp_path: Path, **env_extra: str) -> DesktopApp:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **env_extra,
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    desktop.window.resize(1100, 800)
    desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=COLD_MS):
        desktop.start()
    return desktop


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def streaming_app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    desktop = _desktop(
        qtbot,
        tmp_path,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
    )
    yield desktop
    desktop.shutdown()


def test_a_50000_token_answer_streams_into_the_window_which_holds_exactly_it(
    qtbot: QtBot, streaming_app: DesktopApp, model: ScriptedModelServer
) -> None:
    answer = long_answer(TOKENS * TOKEN_CHARS)
    model.push(Reply.text(answer_text(answer), chunk_size=TOKEN_CHARS))
    streamed: list[str] = []
    finished: list[str] = []

    def collect(params: RunEventParams) -> None:
        if params.event.type == "token":
            streamed.append(params.event.text)
        elif params.event.type in ("run_finished", "run_failed"):
            finished.append(params.event.type)

    app, window = streaming_app, streaming_app.window
    app.client.run_event_received.connect(collect)
    window.composer.editor.setPlainText("Write the long chapter")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(finished), timeout=240_000)
    assert finished == ["run_finished"]
    assert app.process.is_running  # the window and its sidecar are alive
    assert "".join(streamed).strip() == answer
    entries = [e for e in app.state.transcript.entries if isinstance(e, MessageEntry)]
    assert [e.role for e in entries] == ["user", "assistant"]
    assert entries[1].text == answer and not entries[1].streaming
    shown = window.transcript.shown_text(len(app.state.transcript) - 1)
    assert shown.split() == answer.split()  # the painted document: the same words, rendered
    bar = window.transcript.list_view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=10_000)  # it followed the end


def seed_thread(data_dir: Path, thread_id: str, count: int) -> None:
    conn = sqlite3.connect(data_dir / "atrium.db", timeout=60)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
                (
                    (
                        f"m{n}",
                        thread_id,
                        "user" if n % 2 == 0 else "assistant",
                        f"Message {n}: the zebra came to drink." if n == 17 else f"Message {n}.",
                        float(n),
                    )
                    for n in range(count)
                ),
            )
    finally:
        conn.close()


def test_a_thread_of_100000_messages_opens_reaches_its_first_message_and_finds_message_17(
    qtbot: QtBot, tmp_path: Path
) -> None:
    app = _desktop(qtbot, tmp_path)
    try:
        window, transcript = app.window, app.state.transcript
        created = app.controller.create_thread("A long year")
        qtbot.waitUntil(lambda: created.done, timeout=COLD_MS)
        thread_id = app.state.selected_thread_id
        assert thread_id is not None
        seed_thread(tmp_path / "data", thread_id, SEEDED)
        app.controller.fetch_thread(thread_id)
        qtbot.waitUntil(lambda: transcript.oldest_message_id() is not None, timeout=COLD_MS)
        view = window.transcript
        last = len(transcript) - 1
        assert transcript.entry(last) == MessageEntry(
            "assistant", f"Message {SEEDED - 1}.", "m99999"
        )
        qtbot.waitUntil(lambda: view.row_is_visible(last), timeout=10_000)

        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert view.find_bar.isVisible() and view.find_bar.query_edit.hasFocus()
        qtbot.keyClicks(view.find_bar.query_edit, "zebra")
        qtbot.keyClick(view.find_bar.query_edit, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: view.selected_message_id() == "m17", timeout=COLD_MS)
        row = transcript.row_of_message("m17")
        assert row is not None
        qtbot.waitUntil(lambda: view.row_is_visible(row), timeout=10_000)
        assert view.find_bar.status_label.text() == "1 of 1"

        qtbot.keyClick(view.find_bar.query_edit, Qt.Key.Key_Escape)
        view.list_view.setFocus()
        qtbot.keyClick(view.list_view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: transcript.row_of_message("m0") == 0, timeout=COLD_MS)
        assert not transcript.has_older
        qtbot.waitUntil(lambda: view.row_is_visible(0), timeout=10_000)
        assert view.plain_text().splitlines()[0] == "Message 0."

        qtbot.keyClick(view.list_view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: transcript.row_of_message("m99999") is not None, timeout=COLD_MS)
        assert not transcript.has_newer
    finally:
        app.shutdown()


def test_scrolling_up_through_a_thread_of_2000_messages_reaches_every_one(
    qtbot: QtBot, tmp_path: Path
) -> None:
    app = _desktop(qtbot, tmp_path)
    try:
        transcript, view = app.state.transcript, app.window.transcript
        created = app.controller.create_thread("Scrolled")
        qtbot.waitUntil(lambda: created.done, timeout=COLD_MS)
        thread_id = app.state.selected_thread_id
        assert thread_id is not None
        seed_thread(tmp_path / "data", thread_id, 2_000)
        app.controller.fetch_thread(thread_id)
        qtbot.waitUntil(lambda: transcript.oldest_message_id() is not None, timeout=COLD_MS)
        bar = view.list_view.verticalScrollBar()
        seen: set[str] = set()

        def shown_ids() -> list[str]:
            return [e.message_id or "" for e in transcript.entries if isinstance(e, MessageEntry)]

        pages = 0
        while transcript.has_older:
            seen.update(shown_ids())
            first = transcript.oldest_message_id()
            bar.setValue(0)  # the author drags the scroll bar to the top
            qtbot.waitUntil(lambda: transcript.oldest_message_id() != first, timeout=COLD_MS)  # noqa: B023
            qtbot.waitUntil(lambda: bar.value() > 0, timeout=COLD_MS)  # the place is kept
            pages += 1
            assert len(transcript) <= MAX_ROWS  # older pages in, the newest rows out
        seen.update(shown_ids())
        # 200 shown at first, then nine pages of 200; a page that leaves the view at the top
        # loads the next one by itself, so the author may need fewer drags than pages.
        assert 1 <= pages <= 9
        assert seen == {f"m{n}" for n in range(2_000)}  # every message was shown
        assert shown_ids()[0] == "m0" and transcript.has_newer
        bar.setValue(0)
        qtbot.waitUntil(lambda: view.row_is_visible(0), timeout=10_000)

        while transcript.has_newer:  # and back down to the newest
            last = transcript.newest_seq()
            bar.setValue(bar.maximum())
            qtbot.waitUntil(lambda: transcript.newest_seq() != last, timeout=COLD_MS)  # noqa: B023
            qtbot.waitUntil(
                lambda: bar.value() < bar.maximum() or not transcript.has_newer, timeout=COLD_MS
            )  # the place is kept; at the live end the view follows it
        ids = shown_ids()
        assert ids[-1] == "m1999" and ids == sorted(ids, key=lambda i: int(i[1:]))
    finally:
        app.shutdown()
