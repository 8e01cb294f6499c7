"""Desktop notifications: a run finished, failed, or asks a question while the author is away.

`RunNotices` decides what is news (from the session's state); `Notifier` shows it.

`Notifier.notify` does nothing while the window is the active window (the author sees it
happen; `Notifier.tell` says it in the status bar then). Otherwise it shows a system tray
message when the platform has a tray, else an in-window fallback: the status bar says it and
the taskbar entry asks for attention (`QApplication.alert`). Every notification shown is also
emitted as `shown(title, text)`.

A burst never becomes a storm: the first notice shows at once, and whatever arrives in the
next `quiet_ms` is shown as one summary ("12 updates: …") when that time is up.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMainWindow, QStyle, QSystemTrayIcon

from desktop.models.session import SessionState
from sidecar.protocol import InterruptInfo

TRAY_MESSAGE_MS = 8000
STATUS_MESSAGE_MS = 15_000
QUIET_MS = 2000  # at most one notification per this long
SUMMARY_ITEMS = 3  # notices named in a summary before "…"


class Notifier(QObject):
    """Tells the author about the window's news when the window is not focused.

    Signals: `shown(title, text)` for each notification shown (tray or fallback).
    """

    shown = Signal(str, str)

    def __init__(self, window: QMainWindow, quiet_ms: int = QUIET_MS) -> None:
        super().__init__(window)
        self._window = window
        self._tray: QSystemTrayIcon | None = None
        self.via_tray = QSystemTrayIcon.isSystemTrayAvailable()
        self._waiting: list[tuple[str, str]] = []
        self._quiet = QTimer(self)
        self._quiet.setSingleShot(True)
        self._quiet.setInterval(quiet_ms)
        self._quiet.timeout.connect(self._flush)

    def notify(self, title: str, text: str) -> bool:
        """Tell the author unless the window is active; True when it will be shown (now, or in
        the summary at the end of the quiet time)."""
        if self._window.isActiveWindow():
            return False
        if self._quiet.isActive():
            self._waiting.append((title, text))
        else:
            self._show(title, text)
            self._quiet.start()
        return True

    def tell(self, title: str, text: str) -> None:
        """Tell the author wherever they are: a notification when the window is in the
        background, else a line in its status bar (a scheduled run or the heartbeat asks)."""
        if not self.notify(title, text):
            self._window.statusBar().showMessage(f"{title}: {text}", STATUS_MESSAGE_MS)

    def _flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        if len(waiting) == 1:
            self._show(*waiting[0])
        else:
            named = "; ".join(f"{title}: {text}" for title, text in waiting[:SUMMARY_ITEMS])
            more = "; …" if len(waiting) > SUMMARY_ITEMS else ""
            self._show("Atrium", f"{len(waiting)} updates: {named}{more}")
        self._quiet.start()

    def _show(self, title: str, text: str) -> None:
        if self.via_tray:
            self._ensure_tray().showMessage(
                title, text, QSystemTrayIcon.MessageIcon.Information, TRAY_MESSAGE_MS
            )
        else:
            self._window.statusBar().showMessage(f"{title}: {text}", STATUS_MESSAGE_MS)
            QApplication.alert(self._window)
        self.shown.emit(title, text)

    def _ensure_tray(self) -> QSystemTrayIcon:
        if self._tray is None:
            icon = self._window.windowIcon()
            if icon.isNull():
                style = self._window.style()
                icon = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation)
            self._tray = QSystemTrayIcon(icon, self)
            self._tray.setToolTip("Atrium")
            self._tray.messageClicked.connect(self._bring_back)
            self._tray.show()
        return self._tray

    def _bring_back(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()


class RunNotices:
    """Watches the session: a run that ends (finished or failed) or asks a question becomes a
    notification (which `Notifier` shows only when the window is not focused)."""

    def __init__(self, state: SessionState, notifier: Notifier) -> None:
        self._state = state
        self._notifier = notifier
        self._last_status: dict[str, str] = {}
        state.run_state_changed.connect(self._on_run_state_changed)
        state.inbox.added.connect(self._on_interrupt_added)

    def _title(self, thread_id: str) -> str:
        thread = self._state.threads.get(thread_id)
        return thread.title if thread is not None else "Atrium"

    def _on_run_state_changed(self, thread_id: str) -> None:
        run = self._state.run_state(thread_id)
        before = self._last_status.get(thread_id)
        self._last_status[thread_id] = run.status
        if before != "running" or run.status == "running":
            return
        if run.status == "idle":
            self._notifier.notify(self._title(thread_id), "The agent finished.")
        elif run.status == "failed":
            error = run.error or "see the window"
            self._notifier.notify(self._title(thread_id), f"The run failed: {error}")

    def _on_interrupt_added(self, thread_id: str, interrupt: InterruptInfo) -> None:
        if self._state.run_state(thread_id).status != "running":
            return  # reloaded with the thread (start-up, restart): not news
        asks = interrupt.title or "a decision"
        self._notifier.notify(self._title(thread_id), f"The agent asks: {asks}")
