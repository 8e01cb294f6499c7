"""`SidecarProcess`: the sidecar's lifecycle (start, stderr tail, exit detection, restarts).

Messaging lives in `RpcClient`; this class only moves bytes and reports health, like
jupyter_client's manager/restarter pair. Everything is driven by QProcess signals; the only
blocking waits are in `stop`, which runs at shutdown.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from desktop.ipc.health import RestartPolicy, TailBuffer
from sidecar.protocol import EXIT_REFUSED, refusal_reason, storage_refusal

logger = logging.getLogger(__name__)

CRASH_EXIT_CODE = -1
"""Reported as the exit code when the process crashed or could not start at all."""


class SidecarProcess(QObject):
    """Runs the sidecar and restarts it when it dies, within a `RestartPolicy` budget.

    Signals:
        started: the process is running (first start and every restart).
        restarted: emitted after `started` when the start was an automatic restart.
        died(exit_code, stderr_tail): the process ended without being asked to.
        gave_up: the restart budget is spent; `start()` tries again.
        refused(reason): the sidecar would not start (see `sidecar.protocol.process`); it is
            not restarted, since the same start would be refused again.
        storage_refused(StorageRefusal): emitted after `refused` when the refusal was about the
            database file (damaged, emptied, a full disk: `sidecar.protocol.storage`).
        stopped: the process ended after `stop()`.
        output_received(bytes): a chunk of stdout.
    """

    started = Signal()
    restarted = Signal()
    died = Signal(int, str)
    gave_up = Signal()
    refused = Signal(str)
    storage_refused = Signal(object)
    stopped = Signal()
    output_received = Signal(bytes)

    def __init__(
        self,
        program: str,
        arguments: Sequence[str] = (),
        environment: Mapping[str, str] | None = None,
        *,
        policy: RestartPolicy | None = None,
        restart_delay_ms: int = 500,
        tail_bytes: int = 16_384,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._program = program
        self._arguments = list(arguments)
        self._environment = dict(environment) if environment is not None else None
        self._policy = policy or RestartPolicy()
        self._tail = TailBuffer(tail_bytes)
        self._stopping = False
        self._restarting = False
        self._gave_up = False
        self._process = QProcess(self)
        self._restart_timer = QTimer(self)
        self._restart_timer.setSingleShot(True)
        self._restart_timer.setInterval(restart_delay_ms)
        self._restart_timer.timeout.connect(self._on_restart_timer_timeout)
        self._connect_process()

    def _connect_process(self) -> None:
        self._process.started.connect(self._on_process_started)
        self._process.finished.connect(self._on_process_finished)
        self._process.errorOccurred.connect(self._on_process_error_occurred)
        self._process.readyReadStandardOutput.connect(self._on_ready_read_standard_output)
        self._process.readyReadStandardError.connect(self._on_ready_read_standard_error)

    @property
    def is_running(self) -> bool:
        return self._process.state() == QProcess.ProcessState.Running

    @property
    def is_restart_pending(self) -> bool:
        """True while a restart is scheduled after a death."""
        return self._restart_timer.isActive()

    @property
    def has_given_up(self) -> bool:
        return self._gave_up

    def stderr_tail(self) -> str:
        """The last bytes the process wrote to stderr (across restarts)."""
        return self._tail.text()

    def process_id(self) -> int:
        """The OS process id, or 0 when not running."""
        return int(self._process.processId())

    def start(self, once: Sequence[str] = ()) -> None:
        """Start the process; also the author's way back after `gave_up` (resets the budget).

        `once` are arguments for this start only (a repair flag after a storage refusal); an
        automatic restart later runs with the usual arguments."""
        if self.is_running or self._process.state() == QProcess.ProcessState.Starting:
            return
        self._stopping = False
        self._gave_up = False
        self._policy.reset()
        self._restart_timer.stop()
        self._launch(restarting=False, once=once)

    def write(self, data: bytes) -> bool:
        """Queue bytes for the process's stdin; False when it is not running."""
        if not self.is_running:
            return False
        self._process.write(data)
        return True

    def stop(self, timeout_ms: int = 3000) -> None:
        """Close stdin, wait up to `timeout_ms` for a clean exit, then terminate, then kill.

        Blocking on purpose: this is the shutdown path, where the event loop is ending anyway.
        Send the `shutdown` request before calling it so the sidecar can exit by itself.
        """
        self._stopping = True
        self._restart_timer.stop()
        if self._process.state() == QProcess.ProcessState.NotRunning:
            return
        self._process.closeWriteChannel()
        if self._process.waitForFinished(timeout_ms):
            return
        logger.warning("sidecar did not exit within %d ms; terminating it", timeout_ms)
        self._process.terminate()
        if not self._process.waitForFinished(1000):
            self._process.kill()
            self._process.waitForFinished(1000)

    def _launch(self, *, restarting: bool, once: Sequence[str] = ()) -> None:
        self._restarting = restarting
        arguments = [*self._arguments, *once]
        self._process.setProgram(self._program)
        self._process.setArguments(arguments)
        if self._environment is not None:
            env = QProcessEnvironment()
            for key, value in self._environment.items():
                env.insert(key, value)
            self._process.setProcessEnvironment(env)
        logger.info("starting sidecar: %s %s", self._program, " ".join(arguments))
        self._process.start()

    def _on_process_started(self) -> None:
        self.started.emit()
        if self._restarting:
            self.restarted.emit()

    def _on_process_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._on_ready_read_standard_output()
        self._on_ready_read_standard_error()
        crashed = exit_status == QProcess.ExitStatus.CrashExit
        self._handle_exit(CRASH_EXIT_CODE if crashed else exit_code)

    def _on_process_error_occurred(self, error: QProcess.ProcessError) -> None:
        # Only a failed start ends without `finished`; crashes are reported there too.
        if error != QProcess.ProcessError.FailedToStart:
            return
        self._tail.append(f"\n[failed to start: {self._process.errorString()}]\n".encode())
        self._handle_exit(CRASH_EXIT_CODE)

    def _handle_exit(self, exit_code: int) -> None:
        if self._stopping:
            logger.info("sidecar stopped (exit code %d)", exit_code)
            self.stopped.emit()
            return
        reason = refusal_reason(self._tail.text()) if exit_code == EXIT_REFUSED else None
        if reason is not None:
            logger.error("sidecar refused to start: %s", reason)
            self._gave_up = True
            self.refused.emit(reason)
            storage = storage_refusal(self._tail.text())
            if storage is not None:
                self.storage_refused.emit(storage)
            return
        logger.warning("sidecar died (exit code %d)", exit_code)
        self.died.emit(exit_code, self._tail.text())
        if self._policy.allow_restart():
            self._restart_timer.start()
        else:
            logger.error("sidecar keeps dying; giving up on restarts")
            self._gave_up = True
            self.gave_up.emit()

    def _on_restart_timer_timeout(self) -> None:
        if not self._stopping:
            self._launch(restarting=True)

    def _on_ready_read_standard_output(self) -> None:
        data = bytes(self._process.readAllStandardOutput().data())
        if data:
            self.output_received.emit(data)

    def _on_ready_read_standard_error(self) -> None:
        data = bytes(self._process.readAllStandardError().data())
        if data:
            self._tail.append(data)
            logger.debug("sidecar stderr: %s", data.decode("utf-8", errors="replace").rstrip())


def build_sidecar_process(
    data_dir: Path | None = None,
    environment: Mapping[str, str] | None = None,
    *,
    parent: QObject | None = None,
) -> SidecarProcess:
    """The real sidecar (`sidecar_command()`), in the caller's environment.

    `data_dir` sets `ATRIUM_DATA_DIR`; `ATRIUM_WORKSPACE` and `ATRIUM_MODEL` pass through from
    `environment` (default: this process's environment).
    """
    env = dict(environment) if environment is not None else _system_environment()
    if data_dir is not None:
        env["ATRIUM_DATA_DIR"] = str(data_dir)
    program, *arguments = sidecar_command()
    return SidecarProcess(program, arguments, env, parent=parent)


def sidecar_command(executable: str | None = None, *, frozen: bool | None = None) -> list[str]:
    """How to start the sidecar: `python -m sidecar` with this interpreter, or, in the bundled
    app (PyInstaller sets `sys.frozen`), the app's own executable with `--sidecar`, which
    `packaging/entry.py` dispatches to the sidecar (a frozen app has no `-m`).
    """
    executable = sys.executable if executable is None else executable
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    return [executable, "--sidecar"] if frozen else [executable, "-m", "sidecar"]


def _system_environment() -> dict[str, str]:
    system = QProcessEnvironment.systemEnvironment()
    return {key: system.value(key) for key in system.keys()}  # noqa: SIM118 (not iterable)
