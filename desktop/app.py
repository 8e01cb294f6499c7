"""Composition root: `atrium` starts the window and its sidecar.

`build_desktop()` wires the parts without starting anything, so the end-to-end tests can build
the same app with their own data dir and drive it; `main()` is the console script. A second
launch for the same data folder brings the running window forward and exits
(`desktop.single_instance`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from PySide6.QtWidgets import QApplication

from desktop.controllers.composer import ComposerController
from desktop.controllers.memory import MemoryController
from desktop.controllers.plans import CoordController
from desktop.controllers.queue import QueueController
from desktop.controllers.schedules import SchedulesController
from desktop.controllers.servers import ServersController
from desktop.controllers.session import SessionController
from desktop.controllers.skills import SkillsController
from desktop.controllers.storage import StorageController
from desktop.controllers.undo import UndoController
from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.ipc.process import SidecarProcess, build_sidecar_process
from desktop.models.servers import ServersState
from desktop.models.session import SessionState
from desktop.single_instance import SingleInstance, bring_forward, data_folder
from desktop.views.main_window import MainWindow
from desktop.views.rewind_dialog import install_turn_actions
from desktop.views.status_widgets import SidecarBannerWidget
from desktop.views.storage_dialog import StorageRefusalDialog
from desktop.views.tray import install_tray

logger = logging.getLogger("desktop")

SHUTDOWN_TIMEOUT_MS = 3000


@dataclass
class DesktopApp:
    """The wired parts of a running desktop; `start()` launches the sidecar."""

    process: SidecarProcess
    client: RpcClient
    state: SessionState
    controller: SessionController
    window: MainWindow
    servers: ServersController
    composer: ComposerController
    api: SidecarApi
    storage: StorageController
    storage_dialog: StorageRefusalDialog

    def start(self) -> None:
        self.process.start()

    def shutdown(self, timeout_ms: int = SHUTDOWN_TIMEOUT_MS) -> None:
        """Ask the sidecar to shut down, close its stdin, wait briefly, then terminate it."""
        if self.process.is_running:
            self.api.shutdown()
        self.process.stop(timeout_ms)


def build_desktop(
    data_dir: Path | None = None,
    environment: Mapping[str, str] | None = None,
    process: SidecarProcess | None = None,
) -> DesktopApp:
    """Wire process, client, typed api, state, controllers and window (a QApplication must
    exist). Every panel is built by the window from the controller it is given.

    `process` defaults to the real sidecar (`python -m sidecar`) with `ATRIUM_DATA_DIR` set to
    `data_dir`; tests may pass another `SidecarProcess`.
    """
    process = process or build_sidecar_process(data_dir, environment)
    client = RpcClient(process, client_version=_version())
    api = SidecarApi(client)
    state = SessionState()
    controller = SessionController(api, state)
    client.initialized.connect(lambda _result: controller.refresh())
    client.run_event_received.connect(controller.handle_run_event)
    servers = ServersController(api, ServersState())
    client.server_status_received.connect(servers.handle_status)
    coord = CoordController(api)
    client.run_event_received.connect(coord.handle_run_event)
    client.initialized.connect(lambda _result: coord.refresh())
    memory = MemoryController(api)
    client.run_event_received.connect(memory.handle_run_event)
    queue = QueueController(api)
    client.queue_update_received.connect(queue.handle_update)
    window = MainWindow(
        state,
        controller,
        servers=servers,
        coord=coord,
        memory=memory,
        queue=queue,
        schedules=SchedulesController(api),
        skills=SkillsController(api),
    )
    _connect_banner(process, window.banner)
    storage = StorageController(process)
    storage_dialog = _connect_storage(storage, window)
    composer = ComposerController(api)
    client.initialized.connect(lambda _result: composer.refresh_prompts())
    client.server_status_received.connect(composer.handle_status)
    window.composer.set_features(composer)
    install_turn_actions(window.transcript, state, UndoController(api, controller))
    client.automation_notice_received.connect(
        lambda notice: window.notifier.tell(notice.title, notice.text)
    )
    client.initialized.connect(window.set_server_info)
    client.initialize_failed.connect(
        lambda error: window.banner.show_message(f"The sidecar refused to start: {error.message}")
    )
    return DesktopApp(
        process, client, state, controller, window, servers, composer, api, storage, storage_dialog
    )


def _connect_banner(process: SidecarProcess, banner: SidecarBannerWidget) -> None:
    """The banner over the transcript says when the sidecar died, restarted, gave up or
    refused to start; its Restart button starts it again."""
    process.died.connect(banner.show_died)
    process.restarted.connect(banner.show_restarted)
    process.gave_up.connect(banner.show_gave_up)
    process.refused.connect(banner.show_refused)
    banner.restart_requested.connect(process.start)


def _connect_storage(storage: StorageController, window: MainWindow) -> StorageRefusalDialog:
    """A refused damaged or emptied database opens the dialog that offers both ways out (the
    banner says it too, but restarting as it is cannot help)."""
    dialog = StorageRefusalDialog(window)
    storage.refused.connect(dialog.show_refusal)
    dialog.restore_requested.connect(storage.restore)
    dialog.start_fresh_requested.connect(storage.start_fresh)
    return dialog


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="atrium", description="Atrium desktop")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the sidecar keeps its database and logs (default: ATRIUM_DATA_DIR or the "
        "platform's user data dir)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    args, _qt_args = parser.parse_known_args(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the desktop until its window closes; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    sys.excepthook = _log_uncaught
    app = QApplication([sys.argv[0], *argv])
    app.setApplicationName("Atrium")
    app.setOrganizationName("Atrium")
    app.setStyle("Fusion")  # one look everywhere, and palettes (light/dark) apply fully
    data_dir = args.data_dir or _env_path("ATRIUM_DATA_DIR")
    instance = SingleInstance(data_folder(data_dir))
    if instance.forward():
        logger.info("Atrium already runs for this data folder: its window was brought forward")
        return 0
    desktop = build_desktop(data_dir)
    answer_second_launches(instance, desktop.window)
    freeze_start_up()
    app.aboutToQuit.connect(desktop.shutdown)
    desktop.window.quit_requested.connect(app.quit)
    install_tray(app, desktop.window)
    desktop.window.show()
    desktop.start()
    return app.exec()


def answer_second_launches(instance: SingleInstance, window: MainWindow) -> None:
    """This window is its data folder's one: a second launch brings it forward instead of
    opening another."""
    instance.raise_requested.connect(lambda: bring_forward(window))
    instance.listen()


def freeze_start_up() -> None:
    """What start-up built lives as long as the window, so the cyclic collector need not scan it
    again: without this a full collection late in a long stream froze the window ~350 ms. (Only
    for a process that runs one window: frozen objects are never collected.)"""
    gc.collect()
    gc.freeze()


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atrium")
    except PackageNotFoundError:
        return ""


def _log_uncaught(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    """The Qt boundary: an exception escaping a slot is logged, and the window stays up."""
    logger.critical("uncaught exception", exc_info=(exc_type, exc, tb))


if __name__ == "__main__":
    sys.exit(main())
