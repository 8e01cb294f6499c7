"""`PlanDraft`: the author's edits of a proposed plan before approving it (no Qt).

Rows can be edited, moved and dropped; `problems()` runs the cheap checks the coordinator
would run anyway (ids, titles, objectives, known profiles, dependencies that exist, are not the
task itself and make no cycle), so the plan dialog can say what is wrong before sending.
`approve()` carries `tasks` only when the rows differ from the proposal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from sidecar.protocol import ID_PATTERN, PlanApprovalInterrupt, PlanApprovalValue, PlanTaskSpec

_ID = re.compile(ID_PATTERN)
MAX_TASKS = 20


def parse_ids(text: str) -> tuple[str, ...]:
    """Comma-separated ids → a tuple (blanks dropped, order kept, repeats dropped)."""
    ids = [part.strip() for part in text.split(",")]
    return tuple(dict.fromkeys(i for i in ids if i))


@dataclass(frozen=True)
class DraftRow:
    """One task as it stands in the editor; fields may be invalid until checked."""

    id: str
    title: str
    objective: str
    profile: str
    depends_on: tuple[str, ...] = ()
    success_criteria: str = ""

    @classmethod
    def from_spec(cls, spec: PlanTaskSpec) -> DraftRow:
        return cls(spec.id, spec.title, spec.objective, spec.profile, spec.depends_on,
                   spec.success_criteria)  # fmt: skip

    def to_spec(self) -> PlanTaskSpec:
        return PlanTaskSpec(
            id=self.id.strip(), title=self.title.strip(), objective=self.objective.strip(),
            profile=self.profile, depends_on=self.depends_on,
            success_criteria=self.success_criteria,
        )  # fmt: skip


@dataclass
class PlanDraft:
    """The rows of one `plan_approval` interrupt, as the author edits them."""

    interrupt: PlanApprovalInterrupt
    rows: list[DraftRow] = field(default_factory=list[DraftRow])

    @classmethod
    def from_interrupt(cls, interrupt: PlanApprovalInterrupt) -> PlanDraft:
        return cls(interrupt, [DraftRow.from_spec(spec) for spec in interrupt.tasks])

    def put(self, row: int, draft: DraftRow) -> None:
        self.rows[row] = draft

    def move(self, row: int, offset: int) -> int:
        """Move a row up (-1) or down (+1); returns its new index."""
        target = max(0, min(len(self.rows) - 1, row + offset))
        self.rows.insert(target, self.rows.pop(row))
        return target

    def drop(self, row: int) -> DraftRow:
        return self.rows.pop(row)

    @property
    def edited(self) -> bool:
        """The rows differ from the proposal (order counts)."""
        return [DraftRow.from_spec(spec) for spec in self.interrupt.tasks] != self.rows

    def problems(self) -> list[str]:
        """What the coordinator would refuse, one sentence each (empty: fine to send)."""
        problems: list[str] = []
        if not self.rows:
            problems.append("The plan has no tasks left: reject it instead.")
        if len(self.rows) > MAX_TASKS:
            problems.append(f"A plan has at most {MAX_TASKS} tasks.")
        ids = [row.id.strip() for row in self.rows]
        seen: set[str] = set()
        for row, task_id in zip(self.rows, ids, strict=True):
            name = task_id or "(no id)"
            if not _ID.match(task_id):
                problems.append(f"Task {name}: the id must be letters, digits, '_', '.' or '-'.")
            elif task_id in seen:
                problems.append(f"Task {name}: the id is used twice.")
            seen.add(task_id)
            problems.extend(self._row_problems(row, name, set(ids)))
        if not problems and (cycle := self._cycle()):
            problems.append("The dependencies go round in a circle: " + " → ".join(cycle) + ".")
        return problems

    def _row_problems(self, row: DraftRow, name: str, ids: set[str]) -> list[str]:
        problems: list[str] = []
        if not row.title.strip():
            problems.append(f"Task {name}: the title is empty.")
        if not row.objective.strip():
            problems.append(f"Task {name}: the objective is empty.")
        profiles = self.interrupt.profiles
        if not row.profile or (profiles and row.profile not in profiles):
            problems.append(f"Task {name}: choose a known profile.")
        for dependency in row.depends_on:
            if dependency == row.id.strip():
                problems.append(f"Task {name} depends on itself.")
            elif dependency not in ids:
                problems.append(f"Task {name} depends on {dependency}, which is not in the plan.")
        return problems

    def _cycle(self) -> list[str]:
        """One dependency cycle as a path of ids (empty: none)."""
        needs = {row.id.strip(): row.depends_on for row in self.rows}
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        path: list[str] = []

        def visit(task_id: str) -> list[str]:
            state[task_id] = 1
            path.append(task_id)
            for dependency in needs.get(task_id, ()):
                if state.get(dependency) == 1:
                    return [*path[path.index(dependency) :], dependency]
                if dependency not in state and (found := visit(dependency)):
                    return found
            path.pop()
            state[task_id] = 2
            return []

        for task_id in needs:
            if task_id not in state and (found := visit(task_id)):
                return found
        return []

    def approve(self) -> PlanApprovalValue:
        """The approval; `tasks` only when edited.

        Raises:
            ValueError: `problems()` is not empty.
        """
        problems = self.problems()
        if problems:
            raise ValueError(problems[0])
        try:
            tasks = tuple(row.to_spec() for row in self.rows) if self.edited else None
        except ValidationError as exc:  # lengths: rarer than the checks above
            raise ValueError(str(exc.errors()[0]["msg"])) from exc
        return PlanApprovalValue(decision="approve", tasks=tasks)

    def reject(self, reason: str = "") -> PlanApprovalValue:
        return PlanApprovalValue(decision="reject", reason=reason.strip() or None)
