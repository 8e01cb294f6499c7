"""The window on a real X server, driven from inside: `python -m tests.e2e.xvfb_window OUT.json`.

Run by tests/e2e/test_desktop_xvfb.py with `DISPLAY` set to an Xvfb server and
`QT_QPA_PLATFORM=xcb`. It starts the real app (`build_desktop`, the real sidecar) against a
scripted model served from this process, then does what an author does with the keyboard:
types a message and presses Enter, answers the approval dialog with Enter (its default
button, "Allow once"), waits for the answer, and quits with Ctrl+Q. What it saw goes to
OUT.json; the exit code is 0 when the app quit by Ctrl+Q, 2 when the watchdog fired.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog

from desktop.app import build_desktop
from sidecar.protocol import RunEventParams
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply
from tests.fakes.openai_chat import openai_chat_server

ANSWER = "The first chapter is written."
WATCHDOG_MS = 120_000
POLL_MS = 50


def main(out: Path) -> int:
    seen: dict[str, Any] = {"steps": []}
    app = QApplication([sys.argv[0]])
    app.setStyle("Fusion")
    seen["platform"] = app.platformName()
    data = out.parent / "xvfb-data"
    workspace = out.parent / "xvfb-workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    with openai_chat_server() as model:
        model.push(
            Reply.tool_call("workspace__write", {"path": "one.md", "content": "It began.\n"}),
            Reply.text(answer_text(ANSWER), chunk_size=4),
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
        env.update(
            ATRIUM_WORKSPACE=str(workspace),
            ATRIUM_MODEL="openai/gpt-4o-mini",
            ATRIUM_MODEL_API_BASE=model.url + "/v1",
            ATRIUM_MODEL_API_KEY="sk-scripted",
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        desktop = build_desktop(data, env)
        window = desktop.window
        window.quit_requested.connect(app.quit)
        app.aboutToQuit.connect(desktop.shutdown)

        def step(name: str) -> None:
            seen["steps"].append(name)

        def on_event(params: RunEventParams) -> None:
            event = params.event
            if event.type == "run_finished" and event.outcome == "completed":
                step("answered")
                seen["transcript"] = window.transcript.plain_text()
                QTimer.singleShot(200, quit_by_keyboard)

        def send_message() -> None:
            step("initialized")
            window.activateWindow()
            window.composer.editor.setFocus()
            QTest.keyClicks(window.composer.editor, "Write the first chapter")
            QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)
            step("sent")

        def on_dialog(dialog: QDialog) -> None:
            step("dialog")
            seen["dialog_title"] = dialog.windowTitle()
            dialog.activateWindow()  # what a window manager does for a new dialog (Xvfb has none)
            wait_until(dialog.isActiveWindow, lambda: answer(dialog), "dialog_active")

        def answer(dialog: QDialog) -> None:
            step("dialog_active")
            target = QApplication.focusWidget() or dialog
            QTest.keyClick(target, Qt.Key.Key_Return)
            step("approved_by_enter")

        def quit_by_keyboard() -> None:
            window.activateWindow()
            wait_until(window.isActiveWindow, press_ctrl_q, "window_active")

        def press_ctrl_q() -> None:
            step("ctrl_q")
            target = QApplication.focusWidget() or window
            QTest.keyClick(target, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)

        def wait_until(condition: Any, then: Any, what: str, left: int = 200) -> None:
            if condition():
                then()
            elif left <= 0:
                seen["stuck_at"] = what
                app.exit(3)
            else:
                QTimer.singleShot(POLL_MS, lambda: wait_until(condition, then, what, left - 1))

        def watchdog() -> None:
            seen["stuck_at"] = seen["steps"][-1] if seen["steps"] else "start"
            app.exit(2)

        desktop.client.initialized.connect(lambda _result: QTimer.singleShot(100, send_message))
        desktop.client.run_event_received.connect(on_event)
        window.interrupt_dialog_opened.connect(on_dialog)
        QTimer.singleShot(WATCHDOG_MS, watchdog)
        window.show()
        desktop.start()
        code = app.exec()
        desktop.shutdown()
        seen["written"] = (
            (workspace / "one.md").read_text() if (workspace / "one.md").exists() else None
        )
    seen["exit_code"] = code
    out.write_text(json.dumps(seen, indent=2))
    return code


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
