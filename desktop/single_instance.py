"""One window per data folder: a second launch brings the running window forward and exits.

The first window listens on a local socket (`QLocalServer`: a Unix socket, or a named pipe on
Windows) named for its data folder, readable only by the author's user account. A second launch
for the same folder connects, asks for the window and exits 0 once the first one has answered,
instead of opening a second window that would find the folder locked by the first one's
sidecar. A launch for another data folder is another instance and runs beside it.

A socket left behind by a window that crashed answers nobody: the next launch removes it and
listens in its place.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import platformdirs
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

log = logging.getLogger(__name__)

RAISE = b"raise\n"
RAISED = b"raised\n"
ANSWER_TIMEOUT_MS = 3000
"""How long a second launch waits for the running window to answer."""


def data_folder(chosen: Path | None) -> Path:
    """The data folder the sidecar will use: the one chosen (`--data-dir`, `ATRIUM_DATA_DIR`),
    else the platform's user data folder (the sidecar's own default)."""
    folder = chosen if chosen is not None else Path(platformdirs.user_data_dir("atrium", "atrium"))
    return folder.expanduser().resolve()


def server_name(folder: Path) -> str:
    """The local socket's name for `folder` (one per data folder and user)."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
    digest = hashlib.sha256(f"{user}\0{folder}".encode()).hexdigest()[:24]
    return f"atrium-{digest}"


class SingleInstance(QObject):
    """The data folder's one window: `forward()` asks a running one to come forward, `listen()`
    makes this process the running one.

    Signals: `raise_requested()`: a second launch asked for the window."""

    raise_requested = Signal()

    def __init__(self, folder: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(folder)
        self.server: QLocalServer | None = None

    def forward(self, timeout_ms: int = ANSWER_TIMEOUT_MS) -> bool:
        """Ask the running window for this folder to come forward; True once it answered.
        Blocks for at most about `2 * timeout_ms`: it runs at start-up, before this process
        has a window to keep responsive."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False  # nobody listens (or only a crashed window's socket is left)
        socket.write(RAISE)
        socket.flush()
        answered = b""
        while RAISED not in answered and socket.waitForReadyRead(timeout_ms):
            answered += bytes(socket.readAll().data())
        socket.disconnectFromServer()
        if RAISED not in answered:
            log.warning("a running Atrium window did not answer within %d ms", timeout_ms)
        return RAISED in answered

    def listen(self) -> bool:
        """Become the folder's running window (a crashed one's socket is taken over); False
        when the socket cannot be had (then a second launch opens a second window, as
        before, and the sidecar's folder lock says why)."""
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                log.warning("cannot listen for a second launch: %s", server.errorString())
                return False
        server.newConnection.connect(self._on_new_connection)
        self.server = server
        return True

    def close(self) -> None:
        """Stop listening (the socket goes with it)."""
        if self.server is not None:
            self.server.close()
            self.server = None

    def _on_new_connection(self) -> None:
        server = self.server
        while server is not None and server.hasPendingConnections():
            socket = server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._on_ready_read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._on_ready_read(socket)

    def _on_ready_read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        line = bytes(socket.readLine().data())
        if line == RAISE:
            self.raise_requested.emit()
            socket.write(RAISED)
            socket.flush()
        socket.disconnectFromServer()


def bring_forward(window: QWidget) -> None:
    """Show `window` (also from the tray, or minimized) above the others, as it was sized."""
    state = window.windowState() & ~Qt.WindowState.WindowMinimized
    window.setWindowState(state | Qt.WindowState.WindowActive)
    window.show()
    window.raise_()
    window.activateWindow()
