"""routine/save, routine/list: routines live in the workspace (`.atrium/routines/`).

Files are read and written off the event loop, with a deadline."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sidecar import settings as settings_mod
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.plans.routines import (
    Routine,
    RoutineError,
    from_plan,
    routine_files,
    routine_path,
    save,
)
from sidecar.plans.shapes import task_spec
from sidecar.protocol import (
    ROUTINE_LIST,
    ROUTINE_SAVE,
    RoutineEmpty,
    RoutineErrorCode,
    RoutineInfo,
    RoutineListResult,
    RoutineProblem,
    RoutineSaveParams,
    RpcError,
)

IO_DEADLINE_S = 10.0


def _workspace(svc: Services) -> Path:
    return settings_mod.resolve_workspace(svc.settings.load(), os.environ, svc.data_dir)


def _info(workspace: Path, routine: Routine) -> RoutineInfo:
    return RoutineInfo(
        name=routine.name,
        goal=routine.goal,
        parameters=dict(routine.parameters),
        tasks=len(routine.tasks),
        needs_approval=routine.needs_approval,
        path=str(routine_path(workspace, routine.name)),
    )


@registry.method(ROUTINE_SAVE)
async def routine_save(svc: Services, params: RoutineSaveParams) -> RoutineInfo:
    plan = svc.store.get_plan(params.plan_id)
    if plan is None:
        raise RpcError(RoutineErrorCode.NO_SUCH_PLAN, f"no plan {params.plan_id!r}")
    if plan.status != "completed":
        raise RpcError(
            RoutineErrorCode.PLAN_NOT_COMPLETED,
            f"plan {params.plan_id!r} is {plan.status}: only a completed plan becomes a routine",
        )
    tasks = [task_spec(t) for t in svc.store.tasks(plan.id)]
    workspace = _workspace(svc)
    try:
        routine = from_plan(params.name, plan.goal, tasks, params.parameters)
        await asyncio.wait_for(asyncio.to_thread(save, workspace, routine), IO_DEADLINE_S)
    except RoutineError as exc:
        raise RpcError(RoutineErrorCode.ROUTINE_INVALID, str(exc)) from exc
    return _info(workspace, routine)


@registry.method(ROUTINE_LIST)
async def routine_list(svc: Services, params: RoutineEmpty) -> RoutineListResult:
    del params
    workspace = _workspace(svc)
    found = await asyncio.wait_for(asyncio.to_thread(routine_files, workspace), IO_DEADLINE_S)
    return RoutineListResult(
        routines=tuple(_info(workspace, r) for _, r in found if isinstance(r, Routine)),
        problems=tuple(
            RoutineProblem(message=str(e), name=path.stem, path=str(path))
            for path, e in found
            if isinstance(e, RoutineError)
        ),
    )
