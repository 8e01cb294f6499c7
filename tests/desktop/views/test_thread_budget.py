"""The thread's budget in the run tree's header, both ways: `thread/budget` replies and run
events → the line with spent and remaining; the Budget… dialog → `thread/set_budget`."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.models.thread_budget import describe_budget
from desktop.views.run_tree import RunTreePanel, plan_status_text
from desktop.views.thread_budget import ThreadBudgetDialog
from sidecar.protocol import (
    BudgetEvent,
    ErrorObject,
    PlanGetResult,
    RunFinished,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadSetBudgetParams,
)
from tests.desktop.coord_support import plan
from tests.desktop.support import FakeSender, RunScript
from tests.sidecar.protocol.budget_samples import BUDGET_INFO

RESULT = ThreadBudgetResult(thread_id="t1", budget=BUDGET_INFO, spent_tokens=8_200, spent_cost=0.41)


@pytest.fixture
def panel(qtbot: QtBot, fake_sender: FakeSender) -> RunTreePanel:
    coord = CoordController(fake_sender.api)
    panel = RunTreePanel(coord)
    qtbot.addWidget(panel)
    panel.show()
    coord.show_thread("t1")
    fake_sender.last("plan/get")[1].resolve(
        PlanGetResult(thread_id="t1", autonomous=False, plans=())
    )
    return panel


def test_showing_a_thread_loads_its_budget_into_the_header(
    panel: RunTreePanel, fake_sender: FakeSender
):
    params, pending = fake_sender.last("thread/budget")
    assert params == ThreadBudgetParams(thread_id="t1")
    pending.resolve(RESULT)
    assert panel.budget_widget.label.text() == (
        "Budget: 8,200 of 10,000 tokens (1,800 left), $0.4100 of $0.5000 ($0.0900 left) · 80% spent"
    )
    assert panel.budget_widget.button.isEnabled()


def test_without_a_budget_the_header_shows_what_was_spent():
    unbudgeted = ThreadBudgetResult(thread_id="t1", spent_tokens=1_234, spent_cost=0.002)
    assert describe_budget(unbudgeted) == "Spent 1,234 tokens, $0.0020 · no budget"


def test_budget_events_and_ended_runs_reload_it_and_a_failed_load_says_so(
    panel: RunTreePanel, fake_sender: FakeSender
):
    fake_sender.last("thread/budget")[1].resolve(RESULT)
    asked = fake_sender.methods().count("thread/budget")
    script = RunScript()
    panel.controller.handle_run_event(
        script(BudgetEvent(scope="thread", state="warned", budget=BUDGET_INFO, message="80%"))
    )
    panel.controller.handle_run_event(script(RunFinished()))
    assert fake_sender.methods().count("thread/budget") == asked + 2
    fake_sender.last("thread/budget")[1].reject(ErrorObject(code=-32001, message="gone"))
    assert panel.budget_widget.label.text() == "Loading the budget failed: gone"


def test_the_dialog_sends_the_limits_the_author_chose(
    panel: RunTreePanel, fake_sender: FakeSender, qtbot: QtBot
):
    fake_sender.last("thread/budget")[1].resolve(RESULT)
    dialog = panel.budget_widget.build_dialog()
    qtbot.addWidget(dialog)
    assert dialog.limits() == (10_000, 0.5)
    dialog.tokens_spin.setValue(50_000)
    dialog.cost_check.setChecked(False)
    assert not dialog.cost_spin.isEnabled()
    panel.budget_widget._on_dialog_finished(dialog, QDialog.DialogCode.Accepted)
    params, pending = fake_sender.last("thread/set_budget")
    assert params == ThreadSetBudgetParams(thread_id="t1", budget_tokens=50_000)
    pending.resolve(RESULT.model_copy(update={"budget": None}))
    assert panel.budget_widget.label.text().endswith("· no budget")


def test_a_dialog_for_a_thread_without_a_budget_starts_with_both_limits_off(qtbot: QtBot):
    dialog = ThreadBudgetDialog(None)
    qtbot.addWidget(dialog)
    assert dialog.limits() == (None, None)


def test_a_plan_with_a_cost_budget_shows_it_beside_its_tokens():
    priced = plan().model_copy(
        update={"budget_cost": 0.05, "spent_cost": 0.041, "remaining_cost": 0.009}
    )
    assert plan_status_text(priced) == "running · $0.0410 of $0.0500 ($0.0090 left)"
