"""The review gate's wire models: a `changeset` interrupt travels as one of the interrupt union's
kinds, and its resume value refuses what is not a list of paths."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from sidecar.protocol import ChangesetInterrupt, ChangesetValue, InterruptInfo, PlanApprovalValue

INTERRUPT = TypeAdapter[InterruptInfo](InterruptInfo)


def _payload(**fields: Any) -> dict[str, Any]:
    return {
        "id": "i1", "title": "Review the changes", "body": "", "kind": "changeset",
        "agent": "Codex", "workspace": "/w", "folder": "/d/runs/p/t/work", "isolation": "snapshot",
        "files": [
            {"path": "a.txt", "status": "added", "diff": "+a\n", "size": 2},
            {"path": "b.bin", "status": "changed", "binary": True, "conflict": True},
        ],
    } | fields  # fmt: skip


def test_a_changeset_round_trips_through_the_interrupt_union():
    parsed = INTERRUPT.validate_python(_payload())
    assert isinstance(parsed, ChangesetInterrupt)
    assert [(f.path, f.status, f.binary, f.conflict) for f in parsed.files] == [
        ("a.txt", "added", False, False),
        ("b.bin", "changed", True, True),
    ]
    assert INTERRUPT.validate_json(INTERRUPT.dump_json(parsed)) == parsed


@pytest.mark.parametrize(
    "bad",
    [
        {"isolation": "container"},
        {"files": [{"path": "a", "status": "renamed"}]},
        {"files": [{"path": "a", "status": "added", "extra": 1}]},
    ],
)
def test_a_changeset_with_an_unknown_status_isolation_or_field_is_refused(bad: dict[str, Any]):
    with pytest.raises(ValidationError):
        INTERRUPT.validate_python(_payload(**bad))


def test_the_resume_value_lists_paths_and_defaults_to_none_accepted():
    assert ChangesetValue.model_validate({}).accepted == ()
    assert ChangesetValue.model_validate({"accepted": ["a.txt"]}).accepted == ("a.txt",)
    for bad in ({"accepted": "a.txt"}, {"accepted": [1]}, {"paths": []}):
        with pytest.raises(ValidationError):
            ChangesetValue.model_validate(bad)


def test_a_plan_approval_may_name_paths_for_its_grant():
    value = PlanApprovalValue.model_validate({"decision": "approve", "accept_paths": ["docs"]})
    assert value.accept_paths == ("docs",)
    assert PlanApprovalValue.model_validate({"decision": "approve"}).accept_paths is None
