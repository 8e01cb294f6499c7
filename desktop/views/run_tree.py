"""`RunTreePanel`: the shown thread's plans, tasks and subagent activity, with task actions.

A thin view over `RunTree`: thread → plan (goal, version, status) → task (title, status with a
stalled badge, profile, elapsed time ticking while it runs, attempt, tokens, cost, current
activity, Cancel / Retry) → the subagent's activity lines. The header holds the "Autonomous
plans" switch, a refresh button, the thread's budget (spent and remaining, "Budget…") and the
tree's error, if any. A plan row's context menu offers "Save plan as routine…" once the plan
completed (`save_routine_requested`; the Skills panel asks for the name and parameters).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
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
from desktop.models.activity import ActivityEntry
from desktop.models.run_tree import (
    TaskKey,
    TaskNode,
    can_cancel,
    can_retry,
    elapsed_seconds,
    format_elapsed,
)
from desktop.models.thread_budget import spent_of_budget
from desktop.views.text import build_status_label
from desktop.views.thread_budget import ThreadBudgetWidget
from sidecar.protocol import PlanInfo, TaskInfo

COLUMNS = ("Item", "Status", "Profile", "Elapsed", "Attempt", "Tokens in/out", "Cost", "Activity")
STATUS, PROFILE, ELAPSED, ATTEMPT, TOKENS, COST, ACTIVITY = range(1, 8)
ACTIONS = len(COLUMNS)
STALLED_BADGE = "⚠ stalled"
ERROR_COLOUR = QColor("#cf222e")
STALLED_COLOUR = QColor("#9a6700")
TICK_MS = 1000
PLAN_ID_ROLE = Qt.ItemDataRole.UserRole
SAVE_AS_ROUTINE = "Save plan as routine…"


def task_status_text(task: TaskInfo) -> str:
    return f"{task.status} · {STALLED_BADGE}" if task.stalled else task.status


def plan_status_text(plan: PlanInfo) -> str:
    """The plan's status and, with a token or cost budget, what it spent and what remains."""
    parts = [
        plan.status,
        *spent_of_budget(
            (plan.spent_tokens, plan.budget_tokens, plan.remaining_tokens),
            (plan.spent_cost, plan.budget_cost, plan.remaining_cost),
        ),
    ]
    if plan.budget_warned and len(parts) > 1:
        parts.append("80% spent")
    return " · ".join(parts)


def _tokens(task: TaskInfo) -> str:
    return f"{task.tokens_in:,} / {task.tokens_out:,}" if task.tokens_in or task.tokens_out else ""


def _task_tooltip(task: TaskInfo) -> str:
    lines = [task.objective]
    if task.depends_on:
        lines.append("Depends on: " + ", ".join(task.depends_on))
    for label, value in (("Summary", task.summary), ("Error", task.error)):
        if value:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


class TaskActionsWidget(QWidget):
    """Cancel and Retry for one task, enabled by its status."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cancel_button = QPushButton("Cancel")
        self.retry_button = QPushButton("Retry")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.cancel_button)
        layout.addWidget(self.retry_button)

    def show_task(self, task: TaskInfo) -> None:
        self.cancel_button.setEnabled(can_cancel(task))
        self.retry_button.setEnabled(can_retry(task))


class RunTreePanel(QWidget):
    """Follows `RunTree` and sends task actions and the autonomy switch through
    `CoordController`. Tests reach `tree`, `autonomous_check`, `refresh_button`,
    `error_label`, `task_item(plan_id, task_id)` and `task_actions(plan_id, task_id)`.

    Signals: `save_routine_requested(PlanInfo)`, "Save plan as routine…" on a completed plan."""

    save_routine_requested = Signal(object)

    def __init__(self, controller: CoordController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.model = controller.tree
        self._task_items: dict[TaskKey, QTreeWidgetItem] = {}
        self._actions: dict[TaskKey, TaskActionsWidget] = {}
        self._build()
        self.model.reset.connect(self._on_reset)
        self.model.task_changed.connect(self._on_task_changed)
        self.model.activity_changed.connect(self._on_activity_changed)
        self.model.autonomous_changed.connect(self._on_autonomous_changed)
        self.model.error_changed.connect(self._on_error_changed)
        self.ticker = QTimer(self)
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self.tick)
        self.ticker.start()
        self._on_reset()
        self._on_autonomous_changed(self.model.autonomous)
        self._on_error_changed()

    def _build(self) -> None:
        self.title_label = QLabel()
        self.autonomous_check = QCheckBox("Autonomous plans")
        self.autonomous_check.setToolTip("Run this thread's plans without asking for approval")
        self.autonomous_check.clicked.connect(self._on_autonomous_clicked)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.controller.reload)
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.budget_widget)
        layout.addWidget(self.error_label)
        self.error_label.setHidden(False)  # empty text takes no room; shown once parented
        layout.addWidget(self.tree, 1)

    def set_thread_title(self, title: str) -> None:
        self.title_label.setText(title)

    def task_item(self, plan_id: str, task_id: str) -> QTreeWidgetItem | None:
        return self._task_items.get((plan_id, task_id))

    def task_actions(self, plan_id: str, task_id: str) -> TaskActionsWidget | None:
        return self._actions.get((plan_id, task_id))

    def tick(self) -> None:
        """Refresh the elapsed time of the tasks that are still going."""
        now = time.time()
        for key, item in self._task_items.items():
            node = self.model.task(*key)
            if node is not None and node.info.finished_at is None:
                item.setText(ELAPSED, format_elapsed(elapsed_seconds(node.info, now)))

    def _on_reset(self) -> None:
        self.tree.clear()
        self._task_items, self._actions = {}, {}
        if self.model.thread_id is None:
            self.autonomous_check.setEnabled(False)
            return
        self.autonomous_check.setEnabled(True)
        if self.model.loading and not self.model.plans:
            QTreeWidgetItem(self.tree, ["Loading…"])
            return
        if not self.model.plans:
            QTreeWidgetItem(self.tree, ["No plan in this thread yet"])
            return
        newest = self.model.plans[-1].id
        for plan in self.model.plans:
            plan_item = self._add_plan(plan)
            plan_item.setExpanded(plan.id == newest)

    def _add_plan(self, plan: PlanInfo) -> QTreeWidgetItem:
        item = QTreeWidgetItem(
            self.tree, [f"Plan v{plan.version}: {plan.goal}", plan_status_text(plan)]
        )
        item.setToolTip(0, plan.goal)
        item.setData(0, PLAN_ID_ROLE, plan.id)
        for node in self.model.tasks(plan.id):
            self._add_task(item, node)
        return item

    def _add_task(self, parent: QTreeWidgetItem, node: TaskNode) -> None:
        item = QTreeWidgetItem(parent)
        actions = TaskActionsWidget()
        plan_id, task_id = node.key
        actions.cancel_button.clicked.connect(lambda: self.controller.cancel_task(plan_id, task_id))
        actions.retry_button.clicked.connect(lambda: self.controller.retry_task(plan_id, task_id))
        self._task_items[node.key] = item
        self._actions[node.key] = actions
        self.tree.setItemWidget(item, ACTIONS, actions)
        self._show_task(item, node)
        self._show_activity(item, node)
        item.setExpanded(node.info.status in ("running", "waiting"))

    def _show_task(self, item: QTreeWidgetItem, node: TaskNode) -> None:
        task = node.info
        texts = {
            0: task.title,
            STATUS: task_status_text(task),
            PROFILE: task.profile,
            ELAPSED: format_elapsed(elapsed_seconds(task, time.time())),
            ATTEMPT: str(task.attempt) if task.attempt else "",
            TOKENS: _tokens(task),
            COST: f"${task.cost:.4f}" if task.cost else "",
            ACTIVITY: node.error or task.activity or task.error or task.summary or "",
        }
        for column, text in texts.items():
            item.setText(column, text)
        item.setToolTip(0, _task_tooltip(task))
        item.setToolTip(ACTIVITY, texts[ACTIVITY])
        status_colour = STALLED_COLOUR if task.stalled else None
        if task.status == "failed":
            status_colour = ERROR_COLOUR
        item.setForeground(STATUS, QBrush(status_colour) if status_colour else QBrush())
        failed_action = node.error is not None or (task.status == "failed" and not task.activity)
        item.setForeground(ACTIVITY, QBrush(ERROR_COLOUR) if failed_action else QBrush())
        actions = self._actions.get(node.key)
        if actions is not None:
            actions.show_task(task)

    def _show_activity(self, item: QTreeWidgetItem, node: TaskNode) -> None:
        entries = node.activity.entries
        while item.childCount() > len(entries):
            item.takeChild(item.childCount() - 1)
        while item.childCount() < len(entries):
            QTreeWidgetItem(item)
        for row, entry in enumerate(entries):
            child = item.child(row)
            if child is not None:
                _show_entry(child, entry)

    def _on_task_changed(self, plan_id: str, task_id: str) -> None:
        item, node = self._task_items.get((plan_id, task_id)), self.model.task(plan_id, task_id)
        if item is not None and node is not None:
            self._show_task(item, node)

    def _on_activity_changed(self, plan_id: str, task_id: str) -> None:
        item, node = self._task_items.get((plan_id, task_id)), self.model.task(plan_id, task_id)
        if item is not None and node is not None:
            self._show_activity(item, node)

    def plan_menu(self, item: QTreeWidgetItem) -> QMenu | None:
        """The context menu of a plan row (None for other rows): "Save plan as routine…",
        enabled once the plan completed."""
        plan_id = item.data(0, PLAN_ID_ROLE)
        plan = next((p for p in self.model.plans if p.id == plan_id), None)
        if plan is None:
            return None
        menu = QMenu(self.tree)
        action = menu.addAction(SAVE_AS_ROUTINE)
        action.setEnabled(plan.status == "completed")
        action.setToolTip("Run it again later with other values: /routine <name> key=value")
        action.triggered.connect(lambda: self.save_routine_requested.emit(plan))
        return menu

    def _on_context_menu_requested(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        menu = self.plan_menu(item) if item is not None else None
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


def _show_entry(item: QTreeWidgetItem, entry: ActivityEntry) -> None:
    item.setText(0, entry.text)
    item.setText(STATUS, entry.state)
    item.setToolTip(0, entry.detail or entry.text)
    item.setForeground(
        STATUS, QBrush(ERROR_COLOUR) if entry.state in ("error", "fail") else QBrush()
    )
