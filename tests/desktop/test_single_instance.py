"""A second launch for the same data folder brings the running window forward and exits 0,
instead of opening a second window that finds the folder locked; another folder is another
instance; a crashed window's socket is taken over."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QDir, QProcess, QProcessEnvironment, Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, answer_second_launches, build_desktop
from desktop.single_instance import SingleInstance, data_folder, server_name

pytestmark = pytest.mark.slow
TIMEOUT_MS = 30_000
REPO = Path(__file__).resolve().parents[2]


def _launch_env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        ATRIUM_DATA_DIR=str(data),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


def _second_launch(data: Path) -> QProcess:
    process = QProcess()
    environment = QProcessEnvironment()
    for name, value in _launch_env(data).items():
        environment.insert(name, value)
    process.setProcessEnvironment(environment)
    process.setWorkingDirectory(str(REPO))
    process.setProgram(sys.executable)
    process.setArguments(["-m", "desktop.app", "--data-dir", str(data)])
    return process


@pytest.fixture
def desktop(qtbot: QtBot, fake_process_factory, data_dir: Path) -> Iterator[DesktopApp]:
    app = build_desktop(data_dir, process=fake_process_factory())
    qtbot.addWidget(app.window)
    app.window.show()
    with qtbot.waitSignal(app.client.initialized, timeout=TIMEOUT_MS):
        app.start()
    yield app
    app.shutdown(timeout_ms=3000)


def test_a_second_launch_brings_the_running_window_forward_and_exits(
    qtbot: QtBot, desktop: DesktopApp, data_dir: Path
):
    instance = SingleInstance(data_folder(data_dir))
    answer_second_launches(instance, desktop.window)
    desktop.window.showMinimized()
    second = _second_launch(data_dir)
    try:
        with qtbot.waitSignal(instance.raise_requested, timeout=TIMEOUT_MS):
            second.start()
        with qtbot.waitSignal(second.finished, timeout=TIMEOUT_MS):
            pass
        assert (second.exitStatus(), second.exitCode()) == (QProcess.ExitStatus.NormalExit, 0)
        window = desktop.window
        assert window.isVisible()
        assert not window.windowState() & Qt.WindowState.WindowMinimized
    finally:
        second.kill()
        second.waitForFinished(5000)  # shutdown of the test's own child
        instance.close()


def test_another_data_folder_is_another_instance(qtbot: QtBot, tmp_path: Path, qapp: object):
    first = SingleInstance(data_folder(tmp_path / "one"))
    assert first.listen()
    try:
        assert SingleInstance(data_folder(tmp_path / "two")).forward(timeout_ms=500) is False
    finally:
        first.close()


@pytest.mark.skipif(sys.platform == "win32", reason="a named pipe leaves no file behind")
def test_a_crashed_windows_socket_is_taken_over(tmp_path: Path, qapp: object):
    folder = data_folder(tmp_path / "data")
    left = Path(QDir.tempPath()) / server_name(folder)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(left))
    dead.close()  # the file stays, nobody listens: what a killed window leaves
    instance = SingleInstance(folder)
    try:
        assert instance.forward(timeout_ms=500) is False
        assert instance.listen()
    finally:
        instance.close()


def test_two_real_launches_leave_one_window_running(tmp_path: Path, qtbot: QtBot):
    data = tmp_path / "data"
    env = _launch_env(data)
    first = subprocess.Popen(
        [sys.executable, "-m", "desktop.app", "--data-dir", str(data)],
        cwd=REPO,
        env=env,
        start_new_session=True,  # its sidecar goes with it at the end
    )
    try:
        probe = SingleInstance(data_folder(data))
        qtbot.waitUntil(lambda: probe.forward(timeout_ms=500), timeout=TIMEOUT_MS)
        second = subprocess.run(
            [sys.executable, "-m", "desktop.app", "--data-dir", str(data)],
            cwd=REPO,
            env=env,
            timeout=TIMEOUT_MS / 1000,
            check=False,
        )
        assert second.returncode == 0
        assert first.poll() is None  # the first window runs on
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
