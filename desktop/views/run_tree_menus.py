"""What a run tree row's menu offers: a plan's "Save plan as routine…", and a task's windows
onto what it did ("Open transcript", "Show activity", "Show messages") with its actions."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QInputDialog, QMenu, QMessageBox, QWidget

from desktop.controllers.plans import CoordController
from desktop.models.run_tree import TaskNode, can_cancel, can_retry
from desktop.views.task_dialogs import TaskDialogs
from sidecar.protocol import PlanInfo

SAVE_AS_ROUTINE = "Save plan as routine…"
OPEN_TRANSCRIPT = "Open transcript"
SHOW_ACTIVITY = "Show activity"
SHOW_MESSAGES = "Show messages"
SEND_MESSAGE = "Send a message…"


PAUSE_PLAN = "Pause plan"
RESUME_PLAN = "Resume plan"
CANCEL_PLAN = "Cancel plan…"


def build_plan_menu(
    parent: QWidget,
    plan: PlanInfo,
    save_routine: Callable[[PlanInfo], None],
    coord: CoordController,
) -> QMenu:
    """Pause, resume or cancel the plan (as its status allows), then "Save plan as
    routine…", enabled once the plan completed."""
    menu = QMenu(parent)
    controls: list[tuple[str, bool, str, Callable[[], object]]] = [
        (PAUSE_PLAN, plan.status == "running",
         "Stop its agents where they are; nothing runs until you resume it.",
         lambda: coord.pause_plan(plan.id)),
        (RESUME_PLAN, plan.status == "paused",
         "Its agents go on where they stopped.",
         lambda: coord.resume_plan(plan.id)),
        (CANCEL_PLAN, plan.status in ("running", "paused"),
         "End it now; finished tasks keep their results.",
         lambda: _confirm_cancel(parent, plan) and coord.cancel_plan(plan.id)),
    ]  # fmt: skip
    for text, enabled, tip, act in controls:
        control = menu.addAction(text)
        control.setEnabled(enabled)
        control.setToolTip(tip)
        control.triggered.connect(lambda _checked=False, act=act: act())
    menu.addSeparator()
    action = menu.addAction(SAVE_AS_ROUTINE)
    action.setEnabled(plan.status == "completed")
    action.setToolTip("Run it again later with other values: /routine <name> key=value")
    action.triggered.connect(lambda: save_routine(plan))
    menu.setToolTipsVisible(True)
    return menu


def _send_message(
    parent: QWidget, coord: CoordController, plan_id: str, task_id: str, title: str
) -> None:
    """Ask the author for a word to the running task and send it (`task/message`)."""
    text, ok = QInputDialog.getMultiLineText(
        parent,
        "Send a message",
        f"A message to “{title}” (an Atrium subagent reads it before its next step; Claude "
        "Code as its next turn):",
    )
    if ok and text.strip():
        coord.message_task(plan_id, task_id, text.strip())


def _confirm_cancel(parent: QWidget, plan: PlanInfo) -> bool:
    open_tasks = sum(t.status not in _ENDED for t in plan.tasks)
    answer = QMessageBox.question(
        parent,
        "Cancel plan",
        f"Cancel “{plan.goal}”? {open_tasks} unfinished task(s) stop; finished ones keep "
        "their results.",
    )
    return answer == QMessageBox.StandardButton.Yes


_ENDED = frozenset({"succeeded", "failed", "cancelled", "skipped"})


def build_task_menu(
    parent: QWidget, node: TaskNode, dialogs: TaskDialogs, coord: CoordController
) -> QMenu:
    """What the task did (its sub-thread only once it has one), then Cancel and Retry."""
    plan_id, task_id = node.key
    task = node.info
    entries: list[tuple[str, bool, Callable[[], object]]] = [
        (OPEN_TRANSCRIPT, task.sub_thread_id is not None,
         lambda: dialogs.open_transcript(plan_id, task_id)),
        (SHOW_ACTIVITY, True, lambda: dialogs.show_activity(plan_id, task_id)),
        (SHOW_MESSAGES, True, lambda: dialogs.show_messages(plan_id, task_id)),
        ("", False, lambda: None),
        (SEND_MESSAGE, can_cancel(task),
         lambda: _send_message(parent, coord, plan_id, task_id, task.title)),
        ("Cancel", can_cancel(task), lambda: coord.cancel_task(plan_id, task_id)),
        ("Retry", can_retry(task), lambda: coord.retry_task(plan_id, task_id)),
    ]  # fmt: skip
    menu = QMenu(parent)
    for text, enabled, act in entries:
        if not text:
            menu.addSeparator()
            continue
        action = menu.addAction(text)
        action.setEnabled(enabled)
        action.triggered.connect(lambda _checked=False, act=act: act())
    return menu
