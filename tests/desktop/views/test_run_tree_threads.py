"""The run tree shows the background plans of every thread, under their threads' titles, kept
current by any thread's run events; a plan that ends while its thread is not shown is unread
until the author shows that thread or opens the plan."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.main_window import MainWindow
from desktop.views.run_tree import STATUS, RunTreePanel
from desktop.views.run_tree_rows import UNREAD_MARK
from sidecar.protocol import (
    PlanGetResult,
    PlanInfo,
    PlanListResult,
    PlanUpdate,
    RunFinished,
    RunStarted,
    SubagentEvent,
    TaskRef,
    TaskUpdate,
    ThreadGetResult,
    ThreadListResult,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, RunScript, thread_info

LEFT = Qt.MouseButton.LeftButton


def notes_plan(status: str = "running", task_status: str = "running") -> PlanInfo:
    """Plan p2, delegated in thread t2 ("Notes")."""
    return plan(
        task("n", task_status, plan_id="p2"),
        plan_id="p2", thread_id="t2", status=status, created_at=2.0,
    )  # fmt: skip


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """t1 ("Chapter one") shown with its plan p1; t2 ("Notes") has plan p2 running in the
    background; both listed by `plan/list` when the window connected."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    coord = CoordController(fake_sender.api)
    window = MainWindow(state, controller, coord=coord)
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    coord.refresh()
    threads = (thread_info("t1", "Chapter one"), thread_info("t2", "Notes"))
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=threads))
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=threads[0], messages=(), interrupts=(), status="idle")
    )
    fake_sender.last("plan/list")[1].resolve(
        PlanListResult(plans=(notes_plan(), plan(task("a", "succeeded"), status="completed")))
    )
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(
            thread_id="t1",
            autonomous=False,
            plans=(plan(task("a", "succeeded"), status="completed"),),
        )
    )
    return window


def panel_of(window: MainWindow) -> RunTreePanel:
    assert window.run_tree is not None
    return window.run_tree


def top_level(panel: RunTreePanel) -> list[str]:
    items = [panel.tree.topLevelItem(row) for row in range(panel.tree.topLevelItemCount())]
    return [item.text(0) for item in items if item is not None]


def click(qtbot: QtBot, panel: RunTreePanel, item: QTreeWidgetItem) -> None:
    """Click the row's title (the row is wider than the dock)."""
    panel.tree.scrollToItem(item)
    rect = panel.tree.visualItemRect(item)
    title = QPoint(rect.left() + 20, rect.center().y())
    qtbot.mouseClick(panel.tree.viewport(), LEFT, pos=title)


def end_notes_plan(window: MainWindow) -> None:
    """t2's background run: its task succeeds, the plan completes, the run ends."""
    run = RunScript(thread_id="t2", run_id="bg", background=True)
    events = (
        RunStarted(),
        SubagentEvent(task_id="n", plan_id="p2", event={"type": "token", "text": "notes"}),
        TaskUpdate(task=task("n", "succeeded", plan_id="p2")),
        PlanUpdate(plan=notes_plan("completed", "succeeded")),
        RunFinished(),
    )
    for event in events:
        params = run(event)
        window.controller.handle_run_event(params)
        assert window.coord is not None
        window.coord.handle_run_event(params)


def test_every_threads_plans_are_listed_under_their_titles_the_shown_thread_first(
    window: MainWindow,
):
    panel = panel_of(window)
    assert top_level(panel) == ["Chapter one", "Notes"]
    shown, other = panel.thread_item("t1"), panel.thread_item("t2")
    assert shown is not None and other is not None
    assert shown.font(0).bold() and not other.font(0).bold()
    assert other.text(STATUS) == "1 plan · 1 running"
    p2 = panel.plan_item("p2")
    assert p2 is not None and p2.parent() is other and other.isExpanded()
    assert p2.text(STATUS) == "running"


def test_a_plan_ending_in_another_thread_is_unread_until_its_thread_is_shown(
    window: MainWindow,
):
    panel = panel_of(window)
    end_notes_plan(window)
    p2, other = panel.plan_item("p2"), panel.thread_item("t2")
    assert p2 is not None and other is not None
    assert p2.text(0).startswith(UNREAD_MARK) and p2.font(0).bold()
    assert p2.text(STATUS) == "completed" and other.text(STATUS) == "1 plan · 1 unread"
    item = panel.task_item("p2", "n")
    assert item is not None and item.text(STATUS) == "succeeded"
    assert window.state.run_state("t2").status == "idle"  # never busy: it was the background

    window.thread_list.select_thread("t2")
    p2 = panel.plan_item("p2")
    assert window.state.selected_thread_id == "t2" and top_level(panel) == ["Notes", "Chapter one"]
    assert p2 is not None and not p2.text(0).startswith(UNREAD_MARK) and not p2.font(0).bold()


def test_opening_an_unread_plan_reads_it(qtbot: QtBot, window: MainWindow):
    panel = panel_of(window)
    end_notes_plan(window)
    p2 = panel.plan_item("p2")
    assert p2 is not None and window.coord is not None and window.coord.tree.is_unread("p2")
    click(qtbot, panel, p2)
    assert not window.coord.tree.is_unread("p2") and not p2.text(0).startswith(UNREAD_MARK)
    other = panel.thread_item("t2")
    assert other is not None and other.text(STATUS) == "1 plan"


def test_a_task_of_another_threads_plan_is_cancelled_in_its_own_thread(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    panel = panel_of(window)
    actions = panel.task_actions("p2", "n")
    assert actions is not None and actions.cancel_button.isEnabled()
    qtbot.mouseClick(actions.cancel_button, LEFT)
    assert fake_sender.last("task/cancel")[0] == TaskRef(thread_id="t2", task_id="n", plan_id="p2")


def test_a_thread_that_is_deleted_leaves_the_tree(window: MainWindow, fake_sender: FakeSender):
    panel = panel_of(window)
    window.controller.delete_thread("t2")
    fake_sender.last("thread/delete")[1].resolve({})
    assert top_level(panel) == ["Chapter one"]


def test_rows_the_author_closed_stay_closed_when_the_tree_is_built_again(window: MainWindow):
    panel = panel_of(window)
    other = panel.thread_item("t2")
    assert other is not None and other.isExpanded()
    panel.tree.collapseItem(other)
    window.state.add_thread(thread_info("t3", "Letters"))  # the thread list changed
    other = panel.thread_item("t2")
    assert other is not None and not other.isExpanded()
    shown = panel.thread_item("t1")
    assert shown is not None and shown.isExpanded()
