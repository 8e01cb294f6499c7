"""`MainWindow`: threads on the left; transcript, status line and composer on the right.

The menu bar (`desktop.views.menus`) holds every command with its standard shortcut; the
appearance (`desktop.views.theme`), size, place and layout (`desktop.views.window_state`) persist
in QSettings; news reaches an author who is elsewhere through `desktop.views.notifier`.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QSplitter,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.memory import MemoryController
from desktop.controllers.plans import CoordController
from desktop.controllers.queue import QueueController
from desktop.controllers.schedules import SchedulesController
from desktop.controllers.servers import ServersController
from desktop.controllers.session import SessionController
from desktop.controllers.skills import SkillsController
from desktop.models.session import SessionState
from desktop.views.about_dialog import AboutDialog
from desktop.views.composer import ComposerWidget
from desktop.views.grants_panel import GrantsPanelDialog
from desktop.views.inbox_panel import InboxPanel
from desktop.views.interrupt_dialogs import InterruptDialog
from desktop.views.memory_panel import MemoryPanelDialog
from desktop.views.menus import MenuActions, build_menu_bar
from desktop.views.notifier import Notifier, RunNotices
from desktop.views.open_questions import OpenQuestions
from desktop.views.queue_strip import QueueStrip
from desktop.views.run_tree import RunTreePanel
from desktop.views.schedules_panel import SchedulesPanelDialog
from desktop.views.servers_panel import ServersPanelDialog
from desktop.views.settings_dialog import SettingsDialog
from desktop.views.skills_panel import SkillsPanelWidget
from desktop.views.status_widgets import (
    EmptyStateWidget,
    InterruptInboxWidget,
    RunStatusWidget,
    SidecarBannerWidget,
    let_narrow,
)
from desktop.views.theme import ThemeController
from desktop.views.thread_export import ThreadExporter
from desktop.views.thread_list import ThreadListWidget
from desktop.views.transcript_view import TranscriptView
from desktop.views.window_state import app_settings, restore_layout, save_layout
from sidecar.protocol import (
    ErrorObject,
    InitializeResult,
    SettingsInfo,
    SettingsSetParams,
)


class MainWindow(QMainWindow):
    """The author's window. Widgets others (and tests) reach for are public attributes:
    `thread_list`, `transcript`, `composer`, `run_status`, `banner`, `inbox_button`,
    `settings_action`, `dialogs` (open interrupt dialogs by interrupt id), `settings_dialog`,
    `servers_action`, `grants_action`, `servers_panel`, `grants_panel` (the last four need a
    `ServersController`), `inbox_panel` (the selected thread's pending interrupts) and, with a
    `CoordController`, `run_tree` (the plans of every thread, their tasks and subagent activity,
    and what each task did) and the settings' Profiles tab.

    Every panel is attached one way: the window builds it from the controller it is given.
    Docks (Inbox; `run_tree`; `skills_panel`, hidden until View → Skills) go through `_add_dock`;
    dialogs (servers, grants, memory, `schedules_panel`) open from a toolbar action (`open_*`);
    `queue_strip` sits above the composer.

    Pending interrupts never open a storm of dialogs: `questions` (`OpenQuestions`) opens the
    newest when some arrive (or a thread with some is selected) and none is open; the rest wait
    in the inbox. `dialogs` are the open ones.

    The menu bar's actions are in `menu_actions` (`MenuActions`); `theme` applies the appearance,
    `notifier` tells an author who is elsewhere that a run finished, failed or asks something,
    `empty_state` says what to do first while there is nothing to show. A message sent while
    the selected thread waits on a decision is queued by the sidecar, like one sent while a
    turn runs (`SessionController.send_message`); one the sidecar refuses goes back into the
    composer with the reason. With a `MemoryController`, `exporter` saves a thread as Markdown
    or JSON (File → Export thread…, or the thread list's menu).

    Signals: `interrupt_dialog_opened(dialog)`, `settings_dialog_opened(dialog)`,
    `find_requested()` (Edit → Find, Ctrl+F: the find bar listens), `quit_requested()` (File →
    Quit, after the window closed; the app quits).
    """

    interrupt_dialog_opened = Signal(object)
    settings_dialog_opened = Signal(object)
    find_requested = Signal()
    quit_requested = Signal()

    def __init__(
        self,
        state: SessionState,
        controller: SessionController,
        parent: QWidget | None = None,
        *,
        servers: ServersController | None = None,
        coord: CoordController | None = None,
        preferences: QSettings | None = None,
        memory: MemoryController | None = None,
        queue: QueueController | None = None,
        schedules: SchedulesController | None = None,
        skills: SkillsController | None = None,
    ) -> None:
        super().__init__(parent)
        self.preferences = preferences if preferences is not None else app_settings()
        self.servers = servers
        self.coord = coord
        self.memory = memory
        self.queue = queue
        self.schedules = schedules
        self.skills = skills
        self.memory_panel: MemoryPanelDialog | None = None
        self.servers_panel: ServersPanelDialog | None = None
        self.grants_panel: GrantsPanelDialog | None = None
        self.schedules_panel: SchedulesPanelDialog | None = None
        self.state = state
        self.controller = controller
        self.settings_dialog: SettingsDialog | None = None
        self.about_dialog: AboutDialog | None = None
        self.has_model: bool | None = None  # unknown until the sidecar says
        self.server_info: InitializeResult | None = None
        self.setWindowTitle("Atrium")
        self.resize(1440, 800)
        self.theme = ThemeController(self.preferences, self)
        self.notifier = Notifier(self)
        self.run_notices = RunNotices(state, self.notifier)
        self._build_widgets()
        self._build_toolbar()
        self._connect_views()
        self._connect_state()
        self._show_status()
        restore_layout(self.preferences, self, self.splitter)

    def _build_widgets(self) -> None:
        self.thread_list = ThreadListWidget(self.state)
        self.exporter: ThreadExporter | None = None
        if self.memory is not None:
            self.thread_list.attach_memory(self.memory)
            self.exporter = ThreadExporter(self.memory, self)
        self.transcript = TranscriptView(self.state.transcript, self.controller)
        if self.memory is not None:
            self.transcript.attach_memory(self.memory)
        self.run_status = RunStatusWidget()
        self.composer = ComposerWidget()
        self.queue_strip: QueueStrip | None = None
        if self.queue is not None:
            self.queue_strip = QueueStrip(self.queue, self.state, self.composer.bring_back)
            self.thread_list.attach_queue(self.queue)
        self.questions = OpenQuestions(
            self.state, self.controller, self, self.composer.editor, self.coord
        )
        self.banner = SidecarBannerWidget()
        self.empty_state = EmptyStateWidget()
        right = QWidget()
        column = QVBoxLayout(right)
        column.addWidget(self.banner)
        column.addWidget(self.empty_state, 1)
        column.addWidget(self.transcript, 1)
        column.addWidget(self.run_status)
        if self.queue_strip is not None:
            column.addWidget(self.queue_strip)
        column.addWidget(self.composer)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("threads_splitter")
        splitter.addWidget(self.thread_list)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        self.splitter = splitter
        self.setCentralWidget(splitter)
        self._build_docks()

    @property
    def dialogs(self) -> dict[str, InterruptDialog]:
        """The open question dialogs by interrupt id (`OpenQuestions`)."""
        return self.questions.dialogs

    def _build_docks(self) -> None:
        tree = self.coord.tree if self.coord is not None else None
        self.inbox_panel = InboxPanel(self.state, tree)
        self.run_tree: RunTreePanel | None = None
        self.skills_panel: SkillsPanelWidget | None = None
        self.skills_dock: QDockWidget | None = None
        self.docks: list[QDockWidget] = [self._add_dock("Inbox", self.inbox_panel)]
        if self.coord is not None:
            self.run_tree = RunTreePanel(self.coord, self.state.threads)
            let_narrow(self.run_tree.title_label)  # a 200-character thread title fits
            self.docks.append(self._add_dock("Run tree", self.run_tree))
        self.resizeDocks(self.docks[:1], [480], Qt.Orientation.Horizontal)
        self.resizeDocks(self.docks, [140, 600][: len(self.docks)], Qt.Orientation.Vertical)
        if self.skills is not None:
            self.skills_panel = SkillsPanelWidget(self.skills)
            self.skills_dock = self._add_dock("Skills", self.skills_panel)
            self.skills_dock.hide()  # until asked for, unless the saved layout shows it
            self.docks.append(self.skills_dock)

    def _add_dock(self, title: str, widget: QWidget) -> QDockWidget:
        """A dock on the right, named for the saved layout; `_build_toolbar` puts its show/hide
        action in the View menu."""
        dock = QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_").lower() + "_dock")
        dock.setWidget(widget)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        return dock

    def _build_toolbar(self) -> None:
        self.menu_actions: MenuActions = build_menu_bar(
            self, [dock.toggleViewAction() for dock in self.docks]
        )
        toolbar = QToolBar("Main")
        toolbar.setObjectName("main_toolbar")
        toolbar.setMovable(False)
        self.addToolBar(toolbar)
        self.new_thread_action: QAction = self.menu_actions.new_thread
        self.settings_action: QAction = self.menu_actions.settings
        self.new_thread_action.setText("New thread")
        toolbar.addAction(self.new_thread_action)
        toolbar.addAction(self.settings_action)
        self.servers_action: QAction = self.menu_actions.servers
        self.grants_action: QAction = self.menu_actions.grants
        self.servers_action.setEnabled(self.servers is not None)
        self.grants_action.setEnabled(self.servers is not None)
        toolbar.addAction(self.servers_action)
        toolbar.addAction(self.grants_action)
        self.memory_action = QAction("Memory", self)
        self.memory_action.setToolTip("Memories, what the agent saw, identity files")
        self.memory_action.setEnabled(self.memory is not None)
        toolbar.addAction(self.memory_action)
        self.inbox_button = InterruptInboxWidget(self.state.inbox)
        toolbar.addWidget(self.inbox_button)
        self.schedules_action: QAction | None = None
        if self.schedules is not None:
            self.schedules_action = QAction("Schedules", self)
            self.schedules_action.setToolTip("Scheduled prompts: next times, last results, history")
            toolbar.addAction(self.schedules_action)
            self.menu_actions.add_panel(self.schedules_action)

    def _connect_views(self) -> None:
        controller = self.controller
        self.thread_list.thread_selected.connect(controller.select_thread)
        self.thread_list.create_requested.connect(self._on_create_requested)
        self.thread_list.rename_requested.connect(controller.rename_thread)
        self.thread_list.delete_requested.connect(controller.delete_thread)
        self.thread_list.move_requested.connect(controller.move_thread)
        self.thread_list.export_requested.connect(self.export_thread)
        # First back to the end: the message and its answer come into view as they arrive.
        self.composer.message_submitted.connect(self._on_message_sent)
        self.composer.interrupt_submitted.connect(self._on_message_sent)
        self.composer.message_submitted.connect(controller.send_message)
        self.composer.transcript_start_requested.connect(self.transcript.go_to_start)
        self.composer.transcript_end_requested.connect(self.transcript.go_to_end)
        self.composer.interrupt_submitted.connect(
            lambda text: controller.send_message(text, "interrupt")
        )
        self.run_status.cancel_requested.connect(controller.cancel_run)
        self.run_status.retry_requested.connect(controller.retry_run)
        self.new_thread_action.triggered.connect(self._on_create_requested)
        self.settings_action.triggered.connect(self.open_settings)
        self.servers_action.triggered.connect(self.open_servers)
        self.grants_action.triggered.connect(self.open_grants)
        self.memory_action.triggered.connect(self.open_memory)
        if self.schedules_action is not None:
            self.schedules_action.triggered.connect(self.open_schedules)
        self._connect_panels()
        self._connect_menus()
        self.inbox_button.interrupt_activated.connect(self.questions.open)
        self.inbox_panel.interrupt_activated.connect(self.questions.open)
        self.questions.opened.connect(self.interrupt_dialog_opened)
        self.questions.granted.connect(self._on_questions_granted)
        if self.coord is not None:
            self.coord.error_reported.connect(self._on_error_reported)
        controller.error_reported.connect(self._on_error_reported)
        controller.message_refused.connect(self._on_message_refused)
        if self.memory is not None:
            self.memory.error_reported.connect(self._on_error_reported)
        if self.exporter is not None:
            self.exporter.failed.connect(self._on_error_reported)
            self.exporter.exported.connect(self._on_exported)

    def _connect_panels(self) -> None:
        if self.skills_panel is not None and self.skills_dock is not None:
            panel = self.skills_panel
            self.skills_dock.visibilityChanged.connect(
                lambda visible: panel.reload() if visible else None
            )
            panel.run_requested.connect(self.controller.send_message)
            if self.run_tree is not None:
                self.run_tree.save_routine_requested.connect(panel.open_save_routine)
        if self.queue is not None:
            self.queue.failed.connect(self.composer.show_error)

    def _connect_menus(self) -> None:
        actions = self.menu_actions
        actions.quit.triggered.connect(self.quit)
        actions.export_thread.triggered.connect(lambda _checked=False: self.export_thread())
        actions.find.triggered.connect(self.find_requested)
        self.find_requested.connect(self.transcript.open_find_bar)
        actions.stop_run.triggered.connect(self._on_stop_requested)
        actions.next_thread.triggered.connect(lambda: self.thread_list.select_next(1))
        actions.previous_thread.triggered.connect(lambda: self.thread_list.select_next(-1))
        actions.about.triggered.connect(self.open_about)
        for appearance, action in actions.appearance.items():
            action.setChecked(appearance == self.theme.appearance)
            action.triggered.connect(partial(self.theme.set_appearance, appearance))

    def _connect_state(self) -> None:
        self.state.selection_changed.connect(self._on_selection_changed)
        self.state.run_state_changed.connect(self._on_run_state_changed)
        self.state.inbox.changed.connect(self._on_inbox_changed)
        self.state.transcript.reset.connect(self._show_empty_state)
        self.state.transcript.inserted.connect(lambda _row: self._show_empty_state())

    def open_settings(self) -> None:
        """Fetch the settings, then show the dialog (non-modal)."""
        self.controller.load_settings().then(self._show_settings)

    def set_server_info(self, info: InitializeResult) -> None:
        """The sidecar (re)started: whether a model is configured; its versions for About."""
        self.server_info = info
        self.has_model = info.model_configured
        self._show_empty_state()
        if self.about_dialog is not None:  # rebuilt with the new versions when next opened
            self.about_dialog.close()
            self.about_dialog.deleteLater()
            self.about_dialog = None

    def refresh_setup(self) -> None:
        """Ask whether a model is configured, for the empty window's first steps."""
        self.controller.load_settings().then(self._note_settings)

    def _note_settings(self, info: SettingsInfo) -> None:
        self.has_model = info.model is not None
        self._show_empty_state()

    def _show_settings(self, info: SettingsInfo) -> None:
        self._note_settings(info)
        if self.settings_dialog is not None:
            self.settings_dialog.load(info)
            self.settings_dialog.raise_()
            return
        dialog = SettingsDialog(info, self, coord=self.coord)
        dialog.settings_submitted.connect(self._save_settings)
        dialog.finished.connect(lambda _result: self._forget_settings(dialog))
        self.settings_dialog = dialog
        dialog.show()
        self.settings_dialog_opened.emit(dialog)

    def _save_settings(self, params: SettingsSetParams) -> None:
        pending = self.controller.save_settings(params).then(self._note_settings)
        if self.settings_dialog is not None:  # it waits for the answer, with what was typed
            pending.then(self.settings_dialog.show_saved, self.settings_dialog.show_error)

    def _forget_settings(self, dialog: SettingsDialog) -> None:
        if self.settings_dialog is dialog:
            self.settings_dialog = None
        dialog.deleteLater()

    def open_servers(self) -> ServersPanelDialog | None:
        """Show the MCP servers panel (non-modal) and reload the list."""
        if self.servers is None:
            return None
        if self.servers_panel is None:
            self.servers_panel = ServersPanelDialog(self.servers, self)
        self.servers.refresh().then(None, self.servers_panel.show_error)
        self.servers_panel.show()
        self.servers_panel.raise_()
        return self.servers_panel

    def open_grants(self) -> GrantsPanelDialog | None:
        """Show the grants panel (non-modal) and reload the grants."""
        if self.servers is None:
            return None
        if self.grants_panel is None:
            self.grants_panel = GrantsPanelDialog(self.servers, self)
        self.grants_panel.refresh()
        self.grants_panel.show()
        self.grants_panel.raise_()
        return self.grants_panel

    def open_schedules(self) -> SchedulesPanelDialog | None:
        """Show the Schedules panel (non-modal) and reload the schedules."""
        if self.schedules is None:
            return None
        if self.schedules_panel is None:
            self.schedules_panel = SchedulesPanelDialog(
                self.schedules, self, lambda: self.state.threads.threads
            )
        self.schedules.reload()
        self.schedules_panel.show()
        self.schedules_panel.raise_()
        return self.schedules_panel

    def open_memory(self) -> MemoryPanelDialog | None:
        """Show the Memory panel (non-modal) for the selected thread and reload it."""
        if self.memory is None:
            return None
        if self.memory_panel is None:
            self.memory_panel = MemoryPanelDialog(
                self.memory, lambda: self.state.selected_thread_id, self
            )
        self.memory_panel.refresh()
        self.memory_panel.show()
        self.memory_panel.raise_()
        return self.memory_panel

    def export_thread(
        self, thread_id: str | None = None, export_format: str = "markdown"
    ) -> QFileDialog | None:
        """Ask where to save a thread (default: the selected one) as Markdown or JSON."""
        thread_id = thread_id or self.state.selected_thread_id
        thread = self.state.threads.get(thread_id) if thread_id is not None else None
        if self.exporter is None or thread is None:
            return None
        chosen = "json" if export_format == "json" else "markdown"
        return self.exporter.ask(thread.id, thread.title, chosen)

    def _on_exported(self, path: str) -> None:
        self.statusBar().showMessage(f"Exported to {path}", 15_000)

    def _on_message_refused(self, thread_id: str | None, text: str, error: ErrorObject) -> None:
        """A sent message was not taken: back into the composer, never lost (see `take_back`
        for how it joins what was typed since), naming its thread if another is shown."""
        where = ""
        if thread_id is not None and thread_id != self.state.selected_thread_id:
            thread = self.state.threads.get(thread_id)
            where = thread.title if thread is not None else ""
        self.composer.take_back(text, error, where)

    def open_about(self) -> AboutDialog:
        """Help → About: the versions of the app, protocol, Python and Qt."""
        if self.about_dialog is None:
            self.about_dialog = AboutDialog(self, self.server_info)
        self.about_dialog.show()
        self.about_dialog.raise_()
        return self.about_dialog

    def quit(self) -> None:
        """File → Quit: close the window (saving its layout), then ask the app to quit."""
        if self.close():
            self.quit_requested.emit()

    def _on_stop_requested(self) -> None:
        if self.state.run_state(self.state.selected_thread_id).is_running:
            self.controller.cancel_run()

    def _on_message_sent(self, _text: str) -> None:
        self.transcript.follow_end()

    def _on_create_requested(self) -> None:
        self.controller.create_thread()

    def _on_selection_changed(self, thread_id: str | None) -> None:
        self._show_status()
        if self.coord is not None and self.run_tree is not None:
            thread = self.state.threads.get(thread_id) if thread_id is not None else None
            self.run_tree.set_thread_title(thread.title if thread is not None else "")
            self.coord.show_thread(thread_id)
        if thread_id is not None and self.state.inbox.count(thread_id):
            self.questions.open_newest()

    def _on_run_state_changed(self, thread_id: str) -> None:
        if thread_id == self.state.selected_thread_id:
            self._show_status()

    def _on_inbox_changed(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        selected = self.state.selected_thread_id
        run = self.state.run_state(selected)
        waiting = self.state.inbox.count(selected) if selected else 0
        self.run_status.show_state(run, waiting, has_thread=selected is not None)
        self.composer.set_busy(selected is not None and run.is_running)
        self.menu_actions.stop_run.setEnabled(selected is not None and run.is_running)
        self.menu_actions.export_thread.setEnabled(
            selected is not None and self.exporter is not None
        )
        self._show_empty_state()

    def _show_empty_state(self) -> None:
        has_thread = self.state.selected_thread_id is not None
        empty = not has_thread or len(self.state.transcript) == 0
        if empty or self.has_model is False:
            self.empty_state.show_guide(has_thread=has_thread, has_model=self.has_model)
        self.empty_state.setVisible(empty)
        self.transcript.setVisible(not empty)

    def _on_questions_granted(self, notice: str) -> None:
        self.statusBar().showMessage(notice, 15_000)

    def _on_error_reported(self, message: str) -> None:
        self.statusBar().showMessage(message, 15_000)

    def closeEvent(self, event: QCloseEvent) -> None:
        save_layout(self.preferences, self, self.splitter)
        self.questions.close_all()
        if self.run_tree is not None:
            self.run_tree.dialogs.close_all()
        super().closeEvent(event)
