"""The plan dialog's grant paths: named paths travel with the approval (the review gate accepts
the plan's strong agents' changes inside them); none named sends none."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.plan_dialog import PlanApprovalDialog
from sidecar.protocol import PlanApprovalValue
from tests.desktop.coord_support import plan_approval

LEFT = Qt.MouseButton.LeftButton


def build(qtbot: QtBot) -> tuple[PlanApprovalDialog, list[object]]:
    dialog = PlanApprovalDialog(plan_approval("ip", ("writer", "coder")), "Chapter")
    qtbot.addWidget(dialog)
    dialog.show()
    got: list[object] = []
    dialog.answered.connect(lambda _interrupt_id, value: got.append(value))
    return dialog, got


def test_named_paths_are_sent_with_the_approval(qtbot: QtBot):
    dialog, got = build(qtbot)
    dialog.accept_paths_edit.setText(" docs, tests/unit ,, docs ")
    qtbot.mouseClick(dialog.approve_button, LEFT)
    [value] = got
    assert isinstance(value, PlanApprovalValue)
    assert (value.decision, value.accept_paths) == ("approve", ("docs", "tests/unit"))


def test_without_paths_the_approval_carries_none(qtbot: QtBot):
    dialog, got = build(qtbot)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    [value] = got
    assert isinstance(value, PlanApprovalValue) and value.accept_paths is None
