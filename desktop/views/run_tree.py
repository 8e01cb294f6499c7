"""`RunTreePanel`: the plans of every thread, their tasks and subagent activity, with actions.

A thin view over `RunTree`: thread (its title; plans, running, unread) → plan (goal, version,
status) → task (title, status with a stalled badge, profile, elapsed time ticking while it runs,
attempt, tokens, cost, current activity, Cancel / Retry / ⋯) → the subagent's activity lines.
The shown thread comes first; every other thread with plans follows, the one with the newest
plan first, since a delegated plan works in the background wherever the author is. A plan that
ended while its thread was not shown is marked unread (● and bold) until that thread is shown or
the plan is opened (expanded or selected).

A task's menu (right click, or its ⋯ button) opens what it did (`TaskDialogs`): "Open transcript"
(its sub-thread, read-only), "Show activity" (its stored events), "Show messages" (its
envelopes; a strong agent's trace files open from there). A plan row's menu offers "Save plan as
routine…" once the plan completed (`save_routine_requested`; the Skills panel asks for the name
and parameters). The header holds the shown thread's "Autonomous plans" switch, a refresh
button, its budget (spent and remaining, "Budget…") and the tree's error, if any.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.plans import CoordController
from desktop.models.run_tree import (
    TaskKey,
    TaskNode,
    elapsed_seconds,
    format_elapsed,
)
from desktop.models.threads import ThreadsState
from desktop.views.run_tree_menus import (
    OPEN_TRANSCRIPT,
    SAVE_AS_ROUTINE,
    SHOW_ACTIVITY,
    SHOW_MESSAGES,
    build_plan_menu,
    build_task_menu,
)
from desktop.views.run_tree_rows import (
    ACTIONS,
    ACTIVITY,
    ATTEMPT,
    COLUMNS,
    COST,
    ELAPSED,
    STALLED_BADGE,
    STATUS,
    TOKENS,
    TaskActionsWidget,
    plan_status_text,
    show_activity_rows,
    show_plan_row,
    show_task_row,
    thread_summary,
)
from desktop.views.task_dialogs import TaskDialogs
from desktop.views.text import build_status_label
from desktop.views.thread_budget import ThreadBudgetWidget
from sidecar.protocol import PlanInfo

__all__ = [
    "ACTIVITY", "ATTEMPT", "COST", "ELAPSED", "OPEN_TRANSCRIPT", "SAVE_AS_ROUTINE", "SHOW_ACTIVITY",
    "SHOW_MESSAGES", "STALLED_BADGE", "STATUS", "TOKENS", "RunTreePanel", "plan_status_text",
]  # fmt: skip

TICK_MS = 1000
PLAN_ID_ROLE = Qt.ItemDataRole.UserRole
TASK_ID_ROLE = Qt.ItemDataRole.UserRole + 1
THREAD_ID_ROLE = Qt.ItemDataRole.UserRole + 2
_ACTIVE_PLANS = ("running", "awaiting_approval")


class RunTreePanel(QWidget):
    """Follows `RunTree` and sends task actions and the autonomy switch through
    `CoordController`; `threads` (the window's thread list) names each thread's row, and a
    thread it does not list (deleted) is left out. Tests reach `tree`, `autonomous_check`,
    `refresh_button`, `error_label`, `dialogs`, `thread_item(thread_id)`, `plan_item(plan_id)`,
    `task_item(plan_id, task_id)`, `task_actions(plan_id, task_id)` and the menus.

    Signals: `save_routine_requested(PlanInfo)`, "Save plan as routine…" on a completed plan;
    `task_dialog_opened(QDialog)`, a task's transcript, activity, messages or trace shown."""

    save_routine_requested = Signal(object)
    task_dialog_opened = Signal(object)

    def __init__(
        self,
        controller: CoordController,
        threads: ThreadsState | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.model = controller.tree
        self._threads = threads
        self._building = False
        self._chosen: dict[str, bool] = {}  # rows the author opened or closed, by row key
        self._thread_items: dict[str, QTreeWidgetItem] = {}
        self._plan_items: dict[str, QTreeWidgetItem] = {}
        self._task_items: dict[TaskKey, QTreeWidgetItem] = {}
        self._actions: dict[TaskKey, TaskActionsWidget] = {}
        self._build()
        self.dialogs = TaskDialogs(controller.team, self.model, self)
        self.dialogs.dialog_opened.connect(self.task_dialog_opened)
        self._connect_model()
        self.ticker = QTimer(self)
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self.tick)
        self.ticker.start()
        self._on_reset()
        self._on_autonomous_changed(self.model.autonomous)
        self._on_error_changed()

    def _connect_model(self) -> None:
        self.model.reset.connect(self._on_reset)
        self.model.plan_changed.connect(self._on_plan_changed)
        self.model.task_changed.connect(self._on_task_changed)
        self.model.activity_changed.connect(self._on_activity_changed)
        self.model.read_changed.connect(self._on_read_changed)
        self.model.autonomous_changed.connect(self._on_autonomous_changed)
        self.model.error_changed.connect(self._on_error_changed)
        if self._threads is not None:
            self._threads.reset.connect(self._on_reset)
            self._threads.updated.connect(self._on_threads_updated)

    def _build(self) -> None:
        self.title_label = QLabel()
        self.autonomous_check = QCheckBox("Autonomous plans")
        self.autonomous_check.setToolTip("Run this thread's plans without asking for approval")
        self.autonomous_check.clicked.connect(self._on_autonomous_clicked)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.controller.refresh)
        header = QHBoxLayout()
        header.addWidget(self.title_label, 1)
        header.addWidget(self.autonomous_check)
        header.addWidget(self.refresh_button)
        self.budget_widget = ThreadBudgetWidget(self.controller.budget)
        self.error_label = build_status_label()
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([*COLUMNS, ""])
        self.tree.setColumnWidth(0, 200)
        self.tree.setColumnWidth(STATUS, 130)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._on_context_menu_requested)
        self.tree.itemExpanded.connect(self._on_tree_item_expanded)
        self.tree.itemCollapsed.connect(self._on_tree_item_collapsed)
        self.tree.currentItemChanged.connect(self._on_tree_current_item_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.budget_widget)
        layout.addWidget(self.error_label)
        self.error_label.setHidden(False)  # empty text takes no room; shown once parented
        layout.addWidget(self.tree, 1)

    def set_thread_title(self, title: str) -> None:
        self.title_label.setText(title)

    def thread_item(self, thread_id: str) -> QTreeWidgetItem | None:
        return self._thread_items.get(thread_id)

    def plan_item(self, plan_id: str) -> QTreeWidgetItem | None:
        return self._plan_items.get(plan_id)

    def task_item(self, plan_id: str, task_id: str) -> QTreeWidgetItem | None:
        return self._task_items.get((plan_id, task_id))

    def task_actions(self, plan_id: str, task_id: str) -> TaskActionsWidget | None:
        """The task's buttons (made when its plan is first opened, or now)."""
        item = self._task_items.get((plan_id, task_id))
        node = self.model.task(plan_id, task_id)
        if item is None or node is None:
            return None
        return self._actions.get(node.key) or self._add_actions(item, node)

    def tick(self) -> None:
        """Refresh the elapsed time of the tasks that are still going."""
        now = time.time()
        for key, item in self._task_items.items():
            node = self.model.task(*key)
            if node is not None and node.info.finished_at is None:
                item.setText(ELAPSED, format_elapsed(elapsed_seconds(node.info, now)))

    def _shows_thread(self, thread_id: str) -> bool:
        known = self._threads is None or self._threads.get(thread_id) is not None
        return thread_id == self.model.thread_id or known

    @contextmanager
    def _building_rows(self) -> Iterator[None]:
        """Rows opened or made current meanwhile are the panel's doing, not the author's."""
        before, self._building = self._building, True
        try:
            yield
        finally:
            self._building = before

    def _on_reset(self) -> None:
        with self._building_rows():
            self.tree.clear()
            self._thread_items, self._plan_items = {}, {}
            self._task_items, self._actions = {}, {}
            self.autonomous_check.setEnabled(self.model.thread_id is not None)
            for thread_id in self.model.threads():
                if self._shows_thread(thread_id):
                    self._add_thread(thread_id)

    def _add_thread(self, thread_id: str) -> None:
        item = QTreeWidgetItem(self.tree)
        item.setData(0, THREAD_ID_ROLE, thread_id)
        self._thread_items[thread_id] = item
        plans = self.model.plans_of(thread_id)
        shown = thread_id == self.model.thread_id
        if shown and not plans:
            text = "Loading…" if self.model.loading else "No plan in this thread yet"
            QTreeWidgetItem(item, [text])
        for plan in plans:
            self._add_plan(item, plan)
        self._label_thread(thread_id)
        lively = any(p.status in _ACTIVE_PLANS or self.model.is_unread(p.id) for p in plans)
        item.setExpanded(self._chosen.get(_row_key(item), shown or lively))
        for plan in plans:
            newest = plan.id == plans[-1].id
            open_it = newest if shown else plan.status in _ACTIVE_PLANS
            plan_item = self._plan_items[plan.id]
            plan_item.setExpanded(self._chosen.get(_row_key(plan_item), open_it))

    def _thread_title(self, thread_id: str) -> str:
        thread = self._threads.get(thread_id) if self._threads is not None else None
        if thread is not None:
            return thread.title
        if thread_id == self.model.thread_id and self.title_label.text():
            return self.title_label.text()
        return f"Thread {thread_id}"

    def _label_thread(self, thread_id: str) -> None:
        item = self._thread_items.get(thread_id)
        if item is None:
            return
        shown = thread_id == self.model.thread_id
        plans = self.model.plans_of(thread_id)
        item.setText(0, self._thread_title(thread_id))
        item.setText(STATUS, thread_summary(plans, self.model.unread_count(thread_id)))
        item.setToolTip(0, "The thread shown in the window" if shown else "Another thread")
        font = QFont(item.font(0))
        font.setBold(shown)
        item.setFont(0, font)

    def _label_threads(self) -> None:
        for thread_id in self._thread_items:
            self._label_thread(thread_id)

    def _on_threads_updated(self, _row: int) -> None:
        """A thread changed (renamed by the author or named by the sidecar): its row and, for
        the thread shown, the title above the tree follow."""
        shown = self.model.thread_id
        thread = self._threads.get(shown) if self._threads is not None and shown else None
        if thread is not None:
            self.title_label.setText(thread.title)
        self._label_threads()

    def _add_plan(self, parent: QTreeWidgetItem, plan: PlanInfo, index: int = -1) -> None:
        item = QTreeWidgetItem()
        if index < 0:
            parent.addChild(item)
        else:
            parent.insertChild(index, item)
        item.setData(0, PLAN_ID_ROLE, plan.id)
        self._plan_items[plan.id] = item
        show_plan_row(item, plan, self.model.is_unread(plan.id))
        for node in self.model.tasks(plan.id):
            self._add_task(item, node)

    def _add_task(self, parent: QTreeWidgetItem, node: TaskNode, index: int = -1) -> None:
        item = QTreeWidgetItem()
        if index < 0:
            parent.addChild(item)
        else:
            parent.insertChild(index, item)
        item.setData(0, PLAN_ID_ROLE, node.info.plan_id)
        item.setData(0, TASK_ID_ROLE, node.info.id)
        self._task_items[node.key] = item
        show_task_row(item, node)
        show_activity_rows(item, node)
        item.setExpanded(
            self._chosen.get(_row_key(item), node.info.status in ("running", "waiting"))
        )

    def _add_actions(self, item: QTreeWidgetItem, node: TaskNode) -> TaskActionsWidget:
        """Buttons for a task, made only once its plan is open (a widget per task of every
        thread's every plan would make a large tree slow to build)."""
        actions = TaskActionsWidget()
        plan_id, task_id = node.key
        actions.cancel_button.clicked.connect(lambda: self.controller.cancel_task(plan_id, task_id))
        actions.retry_button.clicked.connect(lambda: self.controller.retry_task(plan_id, task_id))
        actions.more_button.clicked.connect(lambda: self._popup_task_menu(item, actions))
        actions.show_task(node.info)
        self._actions[node.key] = actions
        self.tree.setItemWidget(item, ACTIONS, actions)
        return actions

    def _add_plan_actions(self, plan_item: QTreeWidgetItem) -> None:
        plan_id = plan_item.data(0, PLAN_ID_ROLE)
        for row in range(plan_item.childCount()):
            child = plan_item.child(row)
            node = self.model.task(plan_id, _task_id(child))
            if child is not None and node is not None and node.key not in self._actions:
                self._add_actions(child, node)

    def _on_plan_changed(self, plan_id: str) -> None:
        thread_id = self.model.thread_of(plan_id)
        plan = self.model.plan(plan_id)
        if thread_id is None or plan is None or not self._shows_thread(thread_id):
            return
        group = self._thread_items.get(thread_id)
        if group is None:
            self._on_reset()  # the first plan of a thread not shown before
            return
        with self._building_rows():
            item = self._plan_items.get(plan_id)
            if item is None:
                self._add_new_plan(group, thread_id, plan)
            else:
                show_plan_row(item, plan, self.model.is_unread(plan_id))
                self._sync_tasks(item, plan)
            self._label_thread(thread_id)

    def _add_new_plan(self, group: QTreeWidgetItem, thread_id: str, plan: PlanInfo) -> None:
        for row in reversed(range(group.childCount())):
            child = group.child(row)
            if child is not None and child.data(0, PLAN_ID_ROLE) is None:
                group.takeChild(row)  # "No plan in this thread yet"
        plans = self.model.plans_of(thread_id)
        index = [p.id for p in plans].index(plan.id)
        self._add_plan(group, plan, index)
        if thread_id == self.model.thread_id and plan.id == plans[-1].id:
            self._plan_items[plan.id].setExpanded(True)

    def _sync_tasks(self, item: QTreeWidgetItem, plan: PlanInfo) -> None:
        """The plan's task rows follow its tasks: rows of tasks gone are dropped, new tasks
        get rows; a changed order rebuilds them."""
        nodes = self.model.tasks(plan.id)
        keys = [node.key for node in nodes]
        shown = [(plan.id, _task_id(item.child(row))) for row in range(item.childCount())]
        for row in reversed(range(len(shown))):
            if shown[row] not in keys:
                item.takeChild(row)
                self._forget_task(shown.pop(row))
        if shown != keys[: len(shown)]:
            for key in shown:
                self._forget_task(key)
            item.takeChildren()
            shown = []
        for node in nodes[len(shown) :]:
            self._add_task(item, node)
        for node in nodes:
            self._on_task_changed(*node.key)
        if item.isExpanded():
            self._add_plan_actions(item)

    def _forget_task(self, key: TaskKey) -> None:
        self._task_items.pop(key, None)
        self._actions.pop(key, None)

    def _on_task_changed(self, plan_id: str, task_id: str) -> None:
        item, node = self._task_items.get((plan_id, task_id)), self.model.task(plan_id, task_id)
        if item is not None and node is not None:
            show_task_row(item, node)
            actions = self._actions.get(node.key)
            if actions is not None:
                actions.show_task(node.info)

    def _on_activity_changed(self, plan_id: str, task_id: str) -> None:
        item, node = self._task_items.get((plan_id, task_id)), self.model.task(plan_id, task_id)
        if item is not None and node is not None:
            show_activity_rows(item, node)

    def _on_read_changed(self, plan_id: str) -> None:
        item, plan = self._plan_items.get(plan_id), self.model.plan(plan_id)
        if item is not None and plan is not None:
            show_plan_row(item, plan, self.model.is_unread(plan_id))
            self._label_thread(plan.thread_id)

    def _plan_of(self, item: QTreeWidgetItem | None) -> str | None:
        """The plan a row belongs to (its own, or its task's), if any."""
        while item is not None:
            plan_id = item.data(0, PLAN_ID_ROLE)
            if plan_id:
                return plan_id
            item = item.parent()
        return None

    def _on_tree_item_expanded(self, item: QTreeWidgetItem) -> None:
        if not self._building:
            self._chosen[_row_key(item)] = True
        plan_id = item.data(0, PLAN_ID_ROLE)
        if plan_id and item.data(0, TASK_ID_ROLE) is None:
            self._add_plan_actions(item)
            if not self._building:
                self.controller.open_plan(plan_id)

    def _on_tree_item_collapsed(self, item: QTreeWidgetItem) -> None:
        if not self._building:
            self._chosen[_row_key(item)] = False

    def _on_tree_current_item_changed(self, current: QTreeWidgetItem | None, _previous: object):
        plan_id = self._plan_of(current)
        if plan_id and not self._building:
            self.controller.open_plan(plan_id)

    def plan_menu(self, item: QTreeWidgetItem) -> QMenu | None:
        """The context menu of a plan row (None for other rows)."""
        plan = self.model.plan(item.data(0, PLAN_ID_ROLE) or "")
        if plan is None or item.data(0, TASK_ID_ROLE) is not None:
            return None
        return build_plan_menu(self.tree, plan, self.save_routine_requested.emit, self.controller)

    def task_menu(self, item: QTreeWidgetItem) -> QMenu | None:
        """The menu of a task row (None for other rows): what the task did, and its actions."""
        node = self.model.task(item.data(0, PLAN_ID_ROLE) or "", _task_id(item))
        if node is None:
            return None
        return build_task_menu(self.tree, node, self.dialogs, self.controller)

    def _popup_task_menu(self, item: QTreeWidgetItem, actions: TaskActionsWidget) -> None:
        menu = self.task_menu(item)
        if menu is not None:
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            button = actions.more_button
            menu.popup(button.mapToGlobal(button.rect().bottomLeft()))

    def _on_context_menu_requested(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        menu = (self.plan_menu(item) or self.task_menu(item)) if item is not None else None
        if menu is not None:
            menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            menu.popup(self.tree.viewport().mapToGlobal(pos))

    def _on_autonomous_changed(self, autonomous: bool) -> None:
        self.autonomous_check.setChecked(autonomous)

    def _on_autonomous_clicked(self, checked: bool) -> None:
        self.autonomous_check.setChecked(self.model.autonomous)  # until the reply says so
        self.controller.set_autonomous(checked)

    def _on_error_changed(self) -> None:
        self.error_label.setText(self.model.error or "")
        self.error_label.setVisible(bool(self.model.error))


def _task_id(item: QTreeWidgetItem | None) -> str:
    """The task a task row shows ("" for any other row)."""
    return (item.data(0, TASK_ID_ROLE) or "") if item is not None else ""


def _row_key(item: QTreeWidgetItem) -> str:
    """A row's identity across rebuilds: its thread, plan or task."""
    thread_id = item.data(0, THREAD_ID_ROLE)
    if thread_id:
        return f"thread:{thread_id}"
    return f"{item.data(0, PLAN_ID_ROLE)}:{_task_id(item)}"
