"""Wire methods for routines: a completed plan saved with parameters, listed, run again.

A routine runs from the composer as `/routine <name> key=value ...` (or from a schedule whose
prompt is that command): no planning call, and plan approval only when the routine changed since
the author approved it.
"""

from __future__ import annotations

from enum import IntEnum

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel


class RoutineErrorCode(IntEnum):
    """Application error codes of the routine methods (-32090..-32099)."""

    NO_SUCH_PLAN = -32090
    PLAN_NOT_COMPLETED = -32091
    ROUTINE_INVALID = -32092


class RoutineSaveParams(WireModel):
    plan_id: str
    name: str = Field(min_length=1, max_length=64, description="lower-case, digits, hyphens")
    parameters: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Parameter name → its value in this plan; each occurrence becomes {{name}}.",
    )


class RoutineInfo(WireModel):
    name: str
    goal: str
    parameters: dict[str, str] = Field(description="Parameter name → default value.")
    tasks: int
    needs_approval: bool = Field(description="Changed since the author approved it.")
    path: str


class RoutineProblem(WireModel):
    """A routine file that cannot be used, and why."""

    message: str
    name: str = Field(default="", description="The routine's name (its file's stem).")
    path: str = Field(default="", description="The routine's file.")


class RoutineListResult(WireModel):
    routines: tuple[RoutineInfo, ...]
    problems: tuple[RoutineProblem, ...] = ()


class RoutineEmpty(WireModel):
    """No fields."""


ROUTINE_SAVE = "routine/save"
ROUTINE_LIST = "routine/list"

ROUTINE_METHODS: dict[str, MethodSpec] = {
    ROUTINE_SAVE: MethodSpec(RoutineSaveParams, RoutineInfo, "Save a completed plan as a routine."),
    ROUTINE_LIST: MethodSpec(RoutineEmpty, RoutineListResult, "The workspace's routines."),
}
