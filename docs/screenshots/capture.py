"""Take the README's screenshots: `python docs/screenshots/capture.py` (from the repo root).

Starts the real app and sidecar against a scripted model (from the tests' fakes), sends one
message, allows the write it asks for, waits for the answer, then saves the window in light and
in dark as window-light.png and window-dark.png next to this file. Runs offscreen unless
QT_QPA_PLATFORM says otherwise (e.g. `xcb` under Xvfb); window settings go to a temp folder.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialog  # noqa: E402

from desktop.app import build_desktop  # noqa: E402
from desktop.views.approval_dialog import ApprovalDialog  # noqa: E402
from sidecar.protocol import RunEventParams  # noqa: E402
from tests.fakes.dspy_format import answer_text  # noqa: E402
from tests.fakes.model_server import Reply  # noqa: E402
from tests.fakes.openai_chat import openai_chat_server  # noqa: E402

HERE = Path(__file__).resolve().parent
ANSWER = (
    "I wrote **chapter1.md**: the harbour at dawn, Mara counting the boats that did not come "
    "back, and the letter she has not opened yet.\n\n"
    "Next I can:\n\n"
    "1. draft the scene where she opens the letter,\n"
    "2. outline chapters two to five, or\n"
    "3. collect the place names into `places.md`."
)


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="atrium-shots-"))
    for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(scratch / "config"))
    app = QApplication([sys.argv[0]])
    app.setStyle("Fusion")
    workspace = scratch / "workspace"
    workspace.mkdir()
    with openai_chat_server() as model:
        model.push(
            Reply.tool_call(
                "workspace__write",
                {"path": "chapter1.md", "content": "# The harbour\n\nMara counted the boats.\n"},
            ),
            Reply.text(answer_text(ANSWER), chunk_size=8),
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
        env.update(
            ATRIUM_WORKSPACE=str(workspace),
            ATRIUM_MODEL="openai/gpt-4o-mini",
            ATRIUM_MODEL_API_BASE=model.url + "/v1",
            ATRIUM_MODEL_API_KEY="sk-scripted",
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        desktop = build_desktop(scratch / "data", env)
        window = desktop.window
        window.resize(1280, 760)

        def on_dialog(dialog: QDialog) -> None:
            if isinstance(dialog, ApprovalDialog):
                QTimer.singleShot(300, dialog.allow_once_button.click)

        def on_event(params: RunEventParams) -> None:
            event = params.event
            if event.type == "run_finished" and event.outcome == "completed":
                QTimer.singleShot(500, shoot)

        def shoot() -> None:
            window.theme.set_appearance("light")
            QTimer.singleShot(300, lambda: grab("light", then=dark))

        def dark() -> None:
            window.theme.set_appearance("dark")
            QTimer.singleShot(300, lambda: grab("dark", then=app.quit))

        def grab(name: str, then: Callable[[], None]) -> None:
            path = HERE / f"window-{name}.png"
            window.grab().save(str(path))
            print(f"wrote {path.relative_to(ROOT)}")
            QTimer.singleShot(0, then)

        desktop.client.initialized.connect(
            lambda _r: QTimer.singleShot(
                300, lambda: desktop.controller.send_message("Write the opening of chapter one")
            )
        )
        desktop.client.run_event_received.connect(on_event)
        window.interrupt_dialog_opened.connect(on_dialog)
        QTimer.singleShot(120_000, lambda: app.exit(2))
        window.show()
        desktop.start()
        code = app.exec()
        desktop.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
