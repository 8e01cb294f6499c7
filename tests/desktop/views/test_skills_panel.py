"""The Skills panel both ways: listings → rows with their problems visible, filter, reload, a
skill's body on selection; Run… → the `/routine` command on the selected thread; Save plan as
routine… in the run tree → `routine/save`, its refusal shown in the dialog."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QDockWidget
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.controllers.skills import SkillsController, routine_command
from desktop.models.session import SessionState
from desktop.views.main_window import MainWindow
from desktop.views.routine_dialogs import SaveRoutineDialog
from desktop.views.run_tree import SAVE_AS_ROUTINE
from desktop.views.skills_panel import PROBLEM, WHERE, SkillsPanelWidget
from sidecar.plans.routines import parse_args
from sidecar.protocol import (
    ErrorObject,
    PlanGetResult,
    RoutineEmpty,
    RoutineErrorCode,
    RoutineInfo,
    RoutineListResult,
    RoutineProblem,
    RoutineSaveParams,
    RunStartParams,
    SkillErrorCode,
    SkillInfo,
    SkillListResult,
    SkillProblemInfo,
    SkillReadParams,
    SkillReadResult,
    SkillsEmpty,
    ThreadGetResult,
    ThreadListResult,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, thread_info

ROOT = "/ws/.agents/skills"
ROUTINE = RoutineInfo(
    name="harbour-report",
    goal="Harbour report for {{port}} in {{month}}",
    parameters={"port": "Falmouth", "month": "March"},
    tasks=2,
    needs_approval=False,
    path="/ws/.atrium/routines/harbour-report.json",
)


def _skill(name: str, *problems: tuple[str, str], **fields: object) -> SkillInfo:
    base: dict[str, object] = {
        "name": name,
        "description": f"Use for {name}.",
        "source": "workspace:.agents",
        "root": ROOT,
        "path": f"{ROOT}/{name}",
        "ok": not problems,
        "problems": tuple(SkillProblemInfo(kind=k, message=m) for k, m in problems),  # type: ignore[arg-type]
    }
    return SkillInfo.model_validate(base | fields)


SKILLS = (
    _skill("harbour-report"),
    _skill("tide-table", source="workspace:.claude", path="/ws/.claude/skills/tide-table"),
    _skill("bad-yaml", ("bad_frontmatter", "the frontmatter is not valid YAML: line 1")),
    _skill(
        "harbour-report",
        ("duplicate", "duplicate name: workspace:.agents harbour-report wins"),
        source="account",
        path="/data/skills/harbour-report",
        shadowed_by=f"{ROOT}/harbour-report",
    ),
    _skill("huge-body", ("too_large", "body is 5,242,880 bytes (at most 262,144)")),
    _skill("latin1", ("not_utf8", "SKILL.md is not UTF-8 (byte 30)")),
)


def _list(fake_sender: FakeSender, skills: tuple[SkillInfo, ...] = SKILLS) -> None:
    params, pending = fake_sender.last("skills/list")
    assert params == SkillsEmpty()
    pending.resolve(SkillListResult(skills=skills))


def _routines(fake_sender: FakeSender, *problems: RoutineProblem) -> None:
    params, pending = fake_sender.last("routine/list")
    assert params == RoutineEmpty()
    pending.resolve(RoutineListResult(routines=(ROUTINE,), problems=problems))


@pytest.fixture
def panel(qtbot: QtBot, fake_sender: FakeSender) -> SkillsPanelWidget:
    panel = SkillsPanelWidget(SkillsController(fake_sender.api))
    qtbot.addWidget(panel)
    panel.show()
    panel.reload()
    _list(fake_sender)
    _routines(fake_sender)
    return panel


def _rows(panel: SkillsPanelWidget, section: str = "skills") -> list[tuple[str, str, str]]:
    parent = panel.skills_item if section == "skills" else panel.routines_item
    children = [parent.child(i) for i in range(parent.childCount())]
    return [
        (c.text(0), c.text(WHERE), c.text(PROBLEM))
        for c in children
        if c is not None and not c.isHidden()
    ]


def _select(panel: SkillsPanelWidget, section: str, row: int) -> None:
    parent = panel.skills_item if section == "skills" else panel.routines_item
    item = parent.child(row)
    assert item is not None
    panel.tree.setCurrentItem(item)


def test_every_skill_is_listed_and_each_broken_one_shows_an_error_icon_and_its_problem(
    panel: SkillsPanelWidget,
):
    assert _rows(panel) == [
        ("harbour-report", "workspace .agents/skills", ""),
        ("tide-table", "workspace .claude/skills", ""),
        ("bad-yaml", "workspace .agents/skills", "the frontmatter is not valid YAML: line 1"),
        (
            "harbour-report",
            "account",
            "duplicate name: workspace:.agents harbour-report wins; "
            f"shadowed by {ROOT}/harbour-report",
        ),
        ("huge-body", "workspace .agents/skills", "body is 5,242,880 bytes (at most 262,144)"),
        ("latin1", "workspace .agents/skills", "SKILL.md is not UTF-8 (byte 30)"),
    ]
    icons = [panel.skills_item.child(i).icon(0).isNull() for i in range(6)]  # type: ignore[union-attr]
    assert icons == [True, True, False, False, False, False]
    assert panel.skills_item.text(0) == "Skills (6)"
    assert panel.skills_item.text(PROBLEM) == "4 with problems"


def test_the_filter_narrows_skills_and_routines_by_name_source_or_problem(
    qtbot: QtBot, panel: SkillsPanelWidget
):
    qtbot.keyClicks(panel.filter_edit, "HARBOUR")
    assert [r[0] for r in _rows(panel)] == ["harbour-report", "harbour-report"]
    assert [r[0] for r in _rows(panel, "routines")] == ["harbour-report"]

    panel.filter_edit.setText("utf-8")
    assert [r[0] for r in _rows(panel)] == ["latin1"]
    assert _rows(panel, "routines") == []

    panel.filter_edit.clear()
    assert len(_rows(panel)) == 6


def test_reload_asks_again_and_shows_the_new_listing(
    qtbot: QtBot, panel: SkillsPanelWidget, fake_sender: FakeSender
):
    sent = len(fake_sender.sent)
    qtbot.mouseClick(panel.reload_button, Qt.MouseButton.LeftButton)

    assert fake_sender.methods()[sent:] == ["skills/list", "routine/list"]
    _list(fake_sender, (_skill("tide-table"),))
    assert [r[0] for r in _rows(panel)] == ["tide-table"]
    assert panel.skills_item.text(PROBLEM) == ""


def test_a_failed_listing_is_shown_in_the_panel(panel: SkillsPanelWidget, fake_sender: FakeSender):
    panel.reload()
    fake_sender.last("skills/list")[1].reject(
        ErrorObject(code=SkillErrorCode.SKILLS_TIMED_OUT, message="took too long")
    )
    assert panel.error_label.isVisible()
    assert "took too long" in panel.error_label.text()


def test_selecting_a_skill_shows_its_details_then_its_body(
    panel: SkillsPanelWidget, fake_sender: FakeSender
):
    _select(panel, "skills", 0)

    params, pending = fake_sender.last("skills/read")
    assert params == SkillReadParams(path=f"{ROOT}/harbour-report")
    assert "Use for harbour-report." in panel.detail_view.toPlainText()
    pending.resolve(SkillReadResult(path=f"{ROOT}/harbour-report", body="Read the tides."))
    assert panel.detail_view.toPlainText().endswith("Read the tides.")

    _select(panel, "skills", 4)
    fake_sender.last("skills/read")[1].reject(
        ErrorObject(code=SkillErrorCode.SKILL_UNREADABLE, message="body is too large")
    )
    text = panel.detail_view.toPlainText()
    assert "Problem (too_large)" in text and "No body to show: body is too large" in text


def test_a_broken_routine_file_is_listed_with_its_error(
    panel: SkillsPanelWidget, fake_sender: FakeSender
):
    panel.controller.reload_routines()
    problem = RoutineProblem(
        message="routine 'tides' is not valid JSON", name="tides", path="/ws/r/tides.json"
    )
    _routines(fake_sender, problem)

    assert _rows(panel, "routines") == [
        ("harbour-report", "Harbour report for {{port}} in {{month}}", ""),
        ("tides", "/ws/r/tides.json", "routine 'tides' is not valid JSON"),
    ]
    assert panel.routines_item.child(1).icon(0).isNull() is False  # type: ignore[union-attr]
    _select(panel, "routines", 1)
    assert not panel.run_button.isEnabled()


def test_run_asks_for_the_values_prefilled_and_emits_the_routine_command(
    qtbot: QtBot, panel: SkillsPanelWidget
):
    assert not panel.run_button.isEnabled()
    _select(panel, "routines", 0)
    assert panel.run_button.isEnabled()
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    dialog = panel.run_dialog
    assert dialog is not None
    assert {k: e.text() for k, e in dialog.edits.items()} == {"port": "Falmouth", "month": "March"}
    dialog.edits["port"].setText("")
    assert not dialog.ok_button.isEnabled()
    dialog.edits["port"].setText("St Ives")
    dialog.edits["month"].setText("late March")

    with qtbot.waitSignal(panel.run_requested) as sent:
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    command = sent.args[0]  # type: ignore[index]
    assert command == routine_command("harbour-report", {"port": "St Ives", "month": "late March"})
    assert command.startswith("/routine harbour-report ")
    assert parse_args(command.removeprefix("/routine ")) == (
        "harbour-report",
        {"port": "St Ives", "month": "late March"},
    )


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """A window with thread t1 selected, whose plan p1 completed, and the Skills dock."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    skills = SkillsController(fake_sender.api)
    window = MainWindow(state, controller, coord=CoordController(fake_sender.api), skills=skills)
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=(thread_info("t1"),)))
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=thread_info("t1"), messages=(), interrupts=(), status="idle")
    )
    plans = (plan(task("a", "succeeded"), status="completed"),)
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=plans)
    )
    return window


def _dock(window: MainWindow) -> QDockWidget:
    dock = window.findChild(QDockWidget, "skills_dock")
    assert dock is not None
    return dock


def test_view_skills_opens_the_dock_which_lists_on_showing(
    window: MainWindow, fake_sender: FakeSender
):
    dock = _dock(window)
    view_menu = window.menu_actions.view_menu
    assert view_menu is not None and dock.toggleViewAction() in view_menu.actions()
    assert not dock.isVisible()

    dock.toggleViewAction().trigger()

    assert dock.isVisible()
    _list(fake_sender)
    _routines(fake_sender)
    panel = dock.widget()
    assert isinstance(panel, SkillsPanelWidget) and panel.skills_item.childCount() == 6


def test_a_routine_run_from_the_panel_is_sent_on_the_selected_thread(
    window: MainWindow, fake_sender: FakeSender
):
    _dock(window).toggleViewAction().trigger()
    _list(fake_sender)
    _routines(fake_sender)
    panel = _dock(window).widget()
    assert isinstance(panel, SkillsPanelWidget)
    _select(panel, "routines", 0)
    panel.run_button.click()
    assert panel.run_dialog is not None
    panel.run_dialog.edits["port"].setText("Penzance")
    panel.run_dialog.ok_button.click()

    params, _ = fake_sender.last("run/start")
    assert params == RunStartParams(
        thread_id="t1", text="/routine harbour-report port=Penzance month=March"
    )


def _save_dialog(window: MainWindow) -> tuple[SkillsPanelWidget, SaveRoutineDialog]:
    run_tree = window.run_tree
    assert run_tree is not None
    item = run_tree.plan_item("p1")
    assert item is not None
    menu = run_tree.plan_menu(item)
    assert menu is not None
    [action] = [a for a in menu.actions() if a.text() == SAVE_AS_ROUTINE]
    assert action.isEnabled()
    action.trigger()
    panel = _dock(window).widget()
    assert isinstance(panel, SkillsPanelWidget) and panel.save_dialog is not None
    return panel, panel.save_dialog


def test_save_plan_as_routine_sends_routine_save_and_lists_the_routine(
    window: MainWindow, fake_sender: FakeSender
):
    _panel, dialog = _save_dialog(window)
    assert dialog.isVisible() and dialog.name_edit.text() == "write"
    dialog.name_edit.setText("harbour-report")
    dialog.parameters_edit.setPlainText("port=Falmouth\n\nmonth = March\n")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()

    params, pending = fake_sender.last("routine/save")
    assert params == RoutineSaveParams(
        plan_id="p1", name="harbour-report", parameters={"port": "Falmouth", "month": "March"}
    )
    assert not dialog.ok_button.isEnabled()  # until the sidecar answers
    pending.resolve(ROUTINE)
    assert not dialog.isVisible()
    assert fake_sender.methods()[-1] == "routine/list"


def test_a_refused_save_shows_its_reason_in_the_dialog_and_may_be_tried_again(
    window: MainWindow, fake_sender: FakeSender
):
    _panel, dialog = _save_dialog(window)
    dialog.parameters_edit.setPlainText("port Falmouth")
    dialog.ok_button.click()
    assert dialog.error_label.isVisible() and "line 1" in dialog.error_label.text()
    assert "routine/save" not in fake_sender.methods()

    dialog.parameters_edit.setPlainText("port=Penzance")
    dialog.ok_button.click()
    fake_sender.last("routine/save")[1].reject(
        ErrorObject(
            code=RoutineErrorCode.ROUTINE_INVALID,
            message="parameter values not found in the plan: port",
        )
    )

    assert dialog.isVisible() and dialog.error_label.isVisible()
    assert dialog.error_label.text() == "parameter values not found in the plan: port"
    assert dialog.ok_button.isEnabled()


def test_save_as_routine_is_offered_only_on_a_completed_plan(
    window: MainWindow, fake_sender: FakeSender
):
    run_tree = window.run_tree
    assert run_tree is not None
    run_tree.controller.reload()
    plans = (plan(task("a", "running"), status="running"),)
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=plans)
    )
    plan_item = run_tree.plan_item("p1")
    assert plan_item is not None
    menu = run_tree.plan_menu(plan_item)
    assert menu is not None
    [save] = [a for a in menu.actions() if a.text() == SAVE_AS_ROUTINE]
    assert not save.isEnabled()
    task_item = plan_item.child(0)
    assert task_item is not None and run_tree.plan_menu(task_item) is None
