"""`routine/save` turns a completed plan into a routine file in the workspace, refusing what
cannot become one with its code; `routine/list` lists each routine file, and each broken one with
its name, path and error. Real services over a real SQLite file and workspace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.handlers.services import Services
from sidecar.protocol import (
    RoutineEmpty,
    RoutineErrorCode,
    RoutineInfo,
    RoutineListResult,
    RoutineSaveParams,
    RpcError,
)
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services

pytestmark = pytest.mark.anyio

TASKS = [
    {
        "id": "tides",
        "title": "Tides",
        "objective": "List the Falmouth tides.",
        "profile": "general",
        "depends_on": [],
        "success_criteria": "",
    },
    {
        "id": "report",
        "title": "Report",
        "objective": "Write the Falmouth harbour report.",
        "profile": "general",
        "depends_on": ["tides"],
        "success_criteria": "",
    },
]

BUILT_IN = "write-review-revise"
"""Shipped with Atrium (no file until approved or edited)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def svc(tmp_path: Path, workspace: Path) -> Iterator[Services]:
    data = tmp_path / "data"
    data.mkdir()
    services = build_services(data)
    services.settings.update(workspace=str(workspace))
    yield services
    services.store.db.close()


def _plan(svc: Services, status: str = "completed") -> str:
    thread = svc.store.create_thread("harbour")
    svc.store.create_plan("p1", thread.id, "Harbour report for Falmouth", None)
    svc.store.replace_open_tasks("p1", "Harbour report for Falmouth", TASKS)
    svc.store.set_plan_status("p1", status)
    return "p1"


async def _save(svc: Services, **fields: object) -> RoutineInfo:
    params = RoutineSaveParams.model_validate(
        {"plan_id": "p1", "name": "harbour-report", "parameters": {"port": "Falmouth"}} | fields
    )
    return await call(svc, "routine/save", params, RoutineInfo)


async def test_a_completed_plan_is_saved_with_its_parameters_and_listed(
    svc: Services, workspace: Path
) -> None:
    _plan(svc)

    saved = await _save(svc)
    listed = await call(svc, "routine/list", RoutineEmpty(), RoutineListResult)

    path = workspace / ".atrium" / "routines" / "harbour-report.json"
    assert saved == RoutineInfo(
        name="harbour-report",
        goal="Harbour report for {{port}}",
        parameters={"port": "Falmouth"},
        tasks=2,
        needs_approval=False,
        path=str(path),
    )
    assert listed.problems == ()
    assert [r for r in listed.routines if r.name != BUILT_IN] == [saved]
    [built_in] = [r for r in listed.routines if r.name == BUILT_IN]
    assert built_in.path == str(workspace / ".atrium" / "routines" / f"{BUILT_IN}.json")
    assert built_in.needs_approval
    assert json.loads(path.read_text())["tasks"][1]["objective"] == (
        "Write the {{port}} harbour report."
    )


@pytest.mark.parametrize(
    ("status", "fields", "code"),
    [
        ("completed", {"plan_id": "missing"}, RoutineErrorCode.NO_SUCH_PLAN),
        ("running", {}, RoutineErrorCode.PLAN_NOT_COMPLETED),
        ("completed", {"parameters": {"port": "Penzance"}}, RoutineErrorCode.ROUTINE_INVALID),
        ("completed", {"name": "Harbour Report"}, RoutineErrorCode.ROUTINE_INVALID),
    ],
    ids=["no-plan", "not-completed", "value-not-in-plan", "bad-name"],
)
async def test_what_cannot_become_a_routine_is_refused_with_its_code(
    svc: Services, workspace: Path, status: str, fields: dict[str, object], code: int
) -> None:
    _plan(svc, status)

    with pytest.raises(RpcError) as refused:
        await _save(svc, **fields)

    assert refused.value.code == code
    assert not (workspace / ".atrium" / "routines").exists()


async def test_a_broken_routine_file_is_listed_with_its_name_path_and_error(
    svc: Services, workspace: Path
) -> None:
    _plan(svc)
    good = await _save(svc)
    folder = workspace / ".atrium" / "routines"
    (folder / "not-json.json").write_text("{nope", encoding="utf-8")
    (folder / "no-goal.json").write_text(json.dumps({"tasks": []}), encoding="utf-8")

    listed = await call(svc, "routine/list", RoutineEmpty(), RoutineListResult)

    assert [r for r in listed.routines if r.name != BUILT_IN] == [good]
    assert [(p.name, p.path) for p in listed.problems] == [
        ("no-goal", str(folder / "no-goal.json")),
        ("not-json", str(folder / "not-json.json")),
    ]
    assert all(p.message for p in listed.problems)


async def test_a_workspace_without_routines_lists_only_the_built_in_one(svc: Services) -> None:
    listed = await call(svc, "routine/list", RoutineEmpty(), RoutineListResult)

    assert [r.name for r in listed.routines] == [BUILT_IN] and listed.problems == ()
