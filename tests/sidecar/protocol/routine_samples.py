"""Samples of the routine wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import (
    RoutineEmpty,
    RoutineInfo,
    RoutineListResult,
    RoutineProblem,
    RoutineSaveParams,
    WireModel,
)

_INFO = RoutineInfo(
    name="harbour-report",
    goal="Harbour report for {{port}}",
    parameters={"port": "Falmouth"},
    tasks=2,
    needs_approval=False,
    path="/ws/.atrium/routines/harbour-report.json",
)

ROUTINE_SAMPLES: dict[type[WireModel], WireModel] = {
    RoutineSaveParams: RoutineSaveParams(
        plan_id="plan-1", name="harbour-report", parameters={"port": "Falmouth"}
    ),
    RoutineInfo: _INFO,
    RoutineEmpty: RoutineEmpty(),
    RoutineListResult: RoutineListResult(
        routines=(_INFO,),
        problems=(
            RoutineProblem(
                message="routine 'x' needs a goal",
                name="x",
                path="/ws/.atrium/routines/x.json",
            ),
        ),
    ),
}
