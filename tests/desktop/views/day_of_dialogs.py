"""A day of questions in one window, run by `test_day_of_dialogs.py` in a subprocess.

One window answers `sys.argv[1]` approvals (allowed and denied in turn), opening
Settings and About every tenth time, with a full cyclic garbage collection after each, so every
closed dialog and its reference cycles are freed while the window lives on. Prints one JSON line
with what happened; a crash of the binding ends the process instead.
"""

from __future__ import annotations

import gc
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication


def main(count: int) -> dict[str, int]:
    app = QApplication(sys.argv[:1])
    from desktop.controllers.session import SessionController
    from desktop.models.session import SessionState
    from desktop.views.approval_dialog import ApprovalDialog
    from desktop.views.main_window import MainWindow
    from sidecar.protocol import (
        ApprovalInterrupt,
        InterruptEvent,
        RunFinished,
        RunRef,
        ThreadGetResult,
        ThreadListResult,
    )
    from tests.desktop.support import FakeSender, RunScript, thread_info

    sender = FakeSender()
    state = SessionState()
    controller = SessionController(sender.api, state)
    window = MainWindow(state, controller)
    window.show()
    controller.refresh()
    sender.last("thread/list")[1].resolve(ThreadListResult(threads=(thread_info("t1", "One"),)))
    sender.last("thread/get")[1].resolve(
        ThreadGetResult.model_validate(
            {"thread": thread_info("t1"), "messages": (), "interrupts": (), "status": "idle"}
        )
    )
    opened: list[ApprovalDialog] = []
    window.interrupt_dialog_opened.connect(opened.append)
    shown = collected = 0
    for n in range(count):
        run = RunScript(run_id=f"day-{n}")
        question = ApprovalInterrupt(
            id=f"i{n}", title="Write a.md", body="", server="workspace", tool="write",
            arguments={"path": "a.md"}, call_id=f"c{n}",
        )  # fmt: skip
        controller.handle_run_event(run(InterruptEvent(interrupt=question)))
        app.processEvents()
        if opened:
            shown += 1
            dialog = opened.pop()
            button = dialog.deny_button if n % 2 else dialog.allow_once_button
            button.click()
            sender.last("run/resume")[1].resolve(RunRef(run_id=f"r{n}"))
        controller.handle_run_event(run(RunFinished(outcome="completed")))
        if n % 10 == 0:
            window.open_settings()
            app.processEvents()
            for widget in app.topLevelWidgets():
                if widget is not window and widget.isVisible():
                    widget.close()
            window.open_about().close()
        app.processEvents()
        collected += gc.collect()
    return {"shown": shown, "collected": collected, "alive": int(window.isVisible())}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
