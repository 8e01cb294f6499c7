"""`SkillsController`: the Skills panel's requests and what it shows. No Qt.

`reload()` asks for the skills (`skills/list`) and the workspace's routines (`routine/list`);
each reply replaces its part and announces `changed`. `read` fetches a skill's body,
`save_routine` saves a completed plan as a routine (the routines are reloaded after it), and
`routine_command` is the composer command that runs a routine with the author's values.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Mapping

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import ErrorCallback, PendingRequest
from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ErrorObject,
    RoutineInfo,
    RoutineListResult,
    RoutineProblem,
    RoutineSaveParams,
    SkillInfo,
    SkillListResult,
    SkillReadParams,
    SkillReadResult,
)

logger = logging.getLogger(__name__)


def routine_command(name: str, values: Mapping[str, str]) -> str:
    """`/routine <name> key=value ...`, quoted so the sidecar's parser reads each value whole."""
    return "/routine " + shlex.join([name, *(f"{key}={value}" for key, value in values.items())])


class SkillsController:
    """Events:
    changed(): `skills`, `routines` or `routine_problems` was replaced.
    failed(str): a listing failed; a sentence for the author."""

    def __init__(self, api: SidecarApi) -> None:
        self.changed: Emitter[[]] = Emitter()
        self.failed: Emitter[[str]] = Emitter()
        self._api = api
        self.skills: tuple[SkillInfo, ...] = ()
        self.routines: tuple[RoutineInfo, ...] = ()
        self.routine_problems: tuple[RoutineProblem, ...] = ()

    def reload(
        self,
    ) -> tuple[PendingRequest[SkillListResult], PendingRequest[RoutineListResult]]:
        """Ask for the skills and the routines (two requests, each shown when it answers)."""
        skills = self._api.skills_list()
        skills.then(self._on_skills, self._failed("Listing skills"))
        return skills, self.reload_routines()

    def reload_routines(self) -> PendingRequest[RoutineListResult]:
        pending = self._api.routine_list()
        return pending.then(self._on_routines, self._failed("Listing routines"))

    def read(self, path: str) -> PendingRequest[SkillReadResult]:
        """Chain `.then` for the `SkillReadResult` and for the refusal (`NO_SUCH_SKILL`,
        `SKILL_UNREADABLE`)."""
        return self._api.skills_read(SkillReadParams(path=path))

    def save_routine(
        self, plan_id: str, name: str, parameters: Mapping[str, str]
    ) -> PendingRequest[RoutineInfo]:
        """Chain `.then` for the saved `RoutineInfo` and for the refusal (`NO_SUCH_PLAN`,
        `PLAN_NOT_COMPLETED`, `ROUTINE_INVALID`, with the reason in the message)."""
        params = RoutineSaveParams(plan_id=plan_id, name=name, parameters=dict(parameters))
        pending = self._api.routine_save(params)
        return pending.then(self._reload_routines_after)

    def _reload_routines_after(self, _result: object) -> None:
        self.reload_routines()

    def _on_skills(self, result: SkillListResult) -> None:
        self.skills = result.skills
        self.changed.emit()

    def _on_routines(self, result: RoutineListResult) -> None:
        self.routines, self.routine_problems = result.routines, result.problems
        self.changed.emit()

    def _failed(self, what: str) -> ErrorCallback:
        def on_error(error: ErrorObject) -> None:
            logger.info("%s failed: %s (%s)", what, error.message, error.code)
            self.failed.emit(f"{what} failed: {error.message}")

        return on_error
