"""`PlanDraft`: edits of a proposed plan and the checks made before approving it."""

from __future__ import annotations

import pytest

from desktop.models.plan_draft import DraftRow, PlanDraft, parse_ids
from sidecar.protocol import PlanApprovalInterrupt, PlanApprovalValue
from tests.desktop.coord_support import plan_approval


def proposal(profiles: tuple[str, ...] = ("writer", "coder")) -> PlanApprovalInterrupt:
    return plan_approval("i1", profiles)


def test_an_unedited_plan_is_approved_without_tasks():
    draft = PlanDraft.from_interrupt(proposal())
    assert not draft.edited and draft.problems() == []
    assert draft.approve() == PlanApprovalValue(decision="approve")


def test_edits_moves_and_drops_send_the_edited_tasks_in_their_new_order():
    draft = PlanDraft.from_interrupt(proposal())
    draft.drop(2)
    assert draft.move(1, -1) == 0
    row = draft.rows[1]
    draft.put(1, DraftRow(row.id, "Outline first", row.objective, "coder"))
    value = draft.approve()
    assert value.tasks is not None
    assert [(t.id, t.title, t.profile, t.depends_on) for t in value.tasks] == [
        ("b", "Draft", "coder", ("a",)),
        ("a", "Outline first", "coder", ()),
    ]


def test_dropping_a_task_others_depend_on_is_a_problem():
    draft = PlanDraft.from_interrupt(proposal())
    draft.drop(0)
    assert draft.problems() == ["Task b depends on a, which is not in the plan."]
    with pytest.raises(ValueError):
        draft.approve()


def test_self_dependencies_empty_titles_duplicate_ids_and_unknown_profiles_are_problems():
    draft = PlanDraft.from_interrupt(proposal())
    draft.put(0, DraftRow("a", " ", "Outline it", "nobody", ("a",)))
    draft.put(2, DraftRow("b", "Review", "Review it", "writer"))
    assert draft.problems() == [
        "Task a: the title is empty.",
        "Task a: choose a known profile.",
        "Task a depends on itself.",
        "Task b: the id is used twice.",
    ]


def test_a_dependency_cycle_is_named():
    draft = PlanDraft.from_interrupt(proposal())
    row = draft.rows[0]
    draft.put(0, DraftRow(row.id, row.title, row.objective, row.profile, ("c",)))
    assert draft.problems() == ["The dependencies go round in a circle: a → c → b → a."]


def test_rejecting_carries_the_reason_and_an_empty_plan_must_be_rejected():
    draft = PlanDraft.from_interrupt(proposal())
    assert draft.reject("  too long ") == PlanApprovalValue(decision="reject", reason="too long")
    assert draft.reject("").reason is None
    for _ in range(3):
        draft.drop(0)
    assert draft.problems() == ["The plan has no tasks left: reject it instead."]


def test_success_criteria_survive_edits_and_any_profile_goes_when_none_are_listed():
    draft = PlanDraft.from_interrupt(proposal(profiles=()))
    row = draft.rows[2]
    draft.put(2, DraftRow(row.id, "Check", row.objective, "custom", row.depends_on,
                          row.success_criteria))  # fmt: skip
    value = draft.approve()
    assert value.tasks is not None and value.tasks[2].success_criteria == "no typos"
    assert parse_ids(" a, ,b,a ") == ("a", "b")
