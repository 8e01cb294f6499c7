"""How the run tree's rows read: a thread's summary, a plan's status (with its budget), a
task's columns and tooltip, an activity line, and each task's buttons."""

from __future__ import annotations

import time

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QToolButton, QTreeWidgetItem, QWidget

from desktop.models.activity import ActivityEntry
from desktop.models.run_tree import (
    TaskNode,
    can_cancel,
    can_retry,
    elapsed_seconds,
    format_elapsed,
)
from desktop.models.thread_budget import spent_of_budget
from sidecar.protocol import PlanInfo, TaskInfo

COLUMNS = ("Item", "Status", "Profile", "Elapsed", "Attempt", "Tokens in/out", "Cost", "Activity")
STATUS, PROFILE, ELAPSED, ATTEMPT, TOKENS, COST, ACTIVITY = range(1, 8)
ACTIONS = len(COLUMNS)
STALLED_BADGE = "⚠ stalled"
UNREAD_MARK = "● "
ERROR_COLOUR = QColor("#cf222e")
STALLED_COLOUR = QColor("#9a6700")


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


def plan_title(plan: PlanInfo, unread: bool) -> str:
    return f"{UNREAD_MARK if unread else ''}Plan v{plan.version}: {plan.goal}"


def thread_summary(plans: tuple[PlanInfo, ...], unread: int) -> str:
    """A thread row's status: how many plans, how many still running, how many unread."""
    parts = [f"{len(plans)} plan{'s' if len(plans) != 1 else ''}"] if plans else []
    running = sum(plan.status in ("running", "awaiting_approval") for plan in plans)
    if running:
        parts.append(f"{running} running")
    if unread:
        parts.append(f"{unread} unread")
    return " · ".join(parts)


def show_plan_row(item: QTreeWidgetItem, plan: PlanInfo, unread: bool) -> None:
    item.setText(0, plan_title(plan, unread))
    item.setText(STATUS, plan_status_text(plan))
    tip = plan.goal
    if plan.replaced:
        tip += "\n\nReplaced by a replan (kept for the record):" + "".join(
            f"\n  v{r.version} [{r.task.status}] {r.task.title}"
            + (f": {r.task.error}" if r.task.error else "")
            for r in plan.replaced
        )
    if unread:
        tip += "\n\nEnded while its thread was not shown: open it (or its thread) to mark it read"
    item.setToolTip(0, tip)
    font = QFont(item.font(0))
    font.setBold(unread)
    item.setFont(0, font)


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


def show_task_row(item: QTreeWidgetItem, node: TaskNode) -> None:
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


def show_activity_rows(item: QTreeWidgetItem, node: TaskNode) -> None:
    """The task's activity lines as its child rows."""
    entries = node.activity.entries
    while item.childCount() > len(entries):
        item.takeChild(item.childCount() - 1)
    while item.childCount() < len(entries):
        QTreeWidgetItem(item)
    for row, entry in enumerate(entries):
        child = item.child(row)
        if child is not None:
            _show_entry(child, entry)


def _show_entry(item: QTreeWidgetItem, entry: ActivityEntry) -> None:
    item.setText(0, entry.text)
    item.setText(STATUS, entry.state)
    item.setToolTip(0, entry.detail or entry.text)
    item.setForeground(
        STATUS, QBrush(ERROR_COLOUR) if entry.state in ("error", "fail") else QBrush()
    )


class TaskActionsWidget(QWidget):
    """Cancel and Retry for one task, enabled by its status, and "⋯": what the task did
    (its transcript, activity and messages)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cancel_button = QPushButton("Cancel")
        self.retry_button = QPushButton("Retry")
        self.more_button = QToolButton()
        self.more_button.setText("⋯")
        self.more_button.setToolTip("Open transcript, Show activity, Show messages")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.cancel_button)
        layout.addWidget(self.retry_button)
        layout.addWidget(self.more_button)

    def show_task(self, task: TaskInfo) -> None:
        self.cancel_button.setEnabled(can_cancel(task))
        self.retry_button.setEnabled(can_retry(task))
