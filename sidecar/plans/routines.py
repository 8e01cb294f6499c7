"""Routines: a plan that worked, saved with parameters, run again without planning.

A routine is a goal and a task DAG whose text may hold `{{name}}` placeholders, with a default
for each parameter. It lives in the workspace as `.atrium/routines/<name>.json`, so it travels
with the work and can be read, diffed and edited like any file.

Running a routine fills the placeholders from the author's arguments and dispatches the tasks as a
plan, with no planning call. The author approved the plan the routine was saved from, so a run
asks for plan approval again only when the routine changed since it was approved: the file keeps
the digest of the approved content (`approved`), and an edit (by hand or by an agent) makes the
digest differ. Approving such a run records the new digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from sidecar.plans.dag import PlanError, TaskSpec, parse_tasks

ROUTINES_DIR = Path(".atrium") / "routines"
MAX_ROUTINE_BYTES = 256 * 1024
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_PARAM = re.compile(r"^[a-z_][a-z0-9_]{0,39}$")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
_TEXT_FIELDS = ("title", "objective", "success_criteria")


class RoutineError(ValueError):
    """The routine cannot be saved, read or run; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Routine:
    name: str
    goal: str
    tasks: tuple[TaskSpec, ...]
    parameters: Mapping[str, str]
    """Each parameter's default value (what it was in the plan the routine came from)."""
    approved: str | None = None
    """The digest of the content the author last approved."""

    @property
    def digest(self) -> str:
        """A fingerprint of what runs: goal, tasks and parameter names (not their defaults)."""
        content = {
            "goal": self.goal,
            "tasks": [t.to_json() for t in self.tasks],
            "parameters": sorted(self.parameters),
        }
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    @property
    def needs_approval(self) -> bool:
        return self.approved != self.digest

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "goal": self.goal,
            "parameters": dict(self.parameters),
            "tasks": [t.to_json() for t in self.tasks],
            "approved": self.approved,
        }


def check_name(name: str) -> str:
    """Raises:
    RoutineError: not lower-case letters, digits and single hyphens (at most 64)."""
    if not _NAME.match(name) or len(name) > 64:
        raise RoutineError(
            f"routine name {name!r}: use lower-case letters, digits and single hyphens"
        )
    return name


def from_plan(
    name: str, goal: str, tasks: Sequence[TaskSpec], parameters: Mapping[str, str]
) -> Routine:
    """A routine from a finished plan: every occurrence of a parameter's value in the goal and
    the tasks' text becomes its placeholder; the value becomes the default. The result counts as
    approved (the author approved the plan it comes from).

    Raises:
        RoutineError: a bad name, a bad parameter name, or a value that occurs nowhere.
    """
    check_name(name)
    for param, value in parameters.items():
        if not _PARAM.match(param):
            raise RoutineError(f"parameter {param!r}: use lower-case letters, digits and _")
        if not value.strip():
            raise RoutineError(f"parameter {param!r} has an empty value")
    # Longest values first, so a value inside another is not replaced in the longer one's place.
    order = sorted(parameters.items(), key=lambda kv: -len(kv[1]))

    def template(text: str) -> str:
        for param, value in order:
            text = text.replace(value, "{{" + param + "}}")
        return text

    templated = tuple(
        replace(t, **{f: template(getattr(t, f)) for f in _TEXT_FIELDS}) for t in tasks
    )
    routine = Routine(name, template(goal), templated, dict(parameters))
    used = set(_placeholders(routine))
    unused = [p for p in parameters if p not in used]
    if unused:
        raise RoutineError(f"parameter values not found in the plan: {', '.join(unused)}")
    return replace(routine, approved=routine.digest)


def _placeholders(routine: Routine) -> list[str]:
    texts = [routine.goal, *(getattr(t, f) for t in routine.tasks for f in _TEXT_FIELDS)]
    return [m.group(1) for text in texts for m in _PLACEHOLDER.finditer(text)]


def instantiate(routine: Routine, args: Mapping[str, str]) -> tuple[str, list[TaskSpec]]:
    """The goal and tasks with `args` (else the defaults) in place of the placeholders.

    Raises:
        RoutineError: an argument the routine does not take, or a placeholder with no value.
    """
    unknown = [a for a in args if a not in routine.parameters]
    if unknown:
        known = ", ".join(routine.parameters) or "none"
        raise RoutineError(f"routine {routine.name!r} takes no {', '.join(unknown)} ({known})")
    values = {**routine.parameters, **args}

    def fill(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            if match.group(1) not in values:
                raise RoutineError(f"routine {routine.name!r} has no value for {match.group(0)}")
            return values[match.group(1)]

        return _PLACEHOLDER.sub(value, text)

    tasks = [replace(t, **{f: fill(getattr(t, f)) for f in _TEXT_FIELDS}) for t in routine.tasks]
    return fill(routine.goal), tasks


WRITE_REVIEW_REVISE = Routine(
    name="write-review-revise",
    goal="Write {{piece}}, reviewed until the reviewer approves",
    tasks=(
        TaskSpec(
            id="write",
            title="Write {{piece}}",
            objective=(
                "Write {{piece}}. Answer with the whole text. When a reviewer sends comments, "
                "revise the text to answer every one, and answer with the whole revised text."
            ),
            profile="writer",
            success_criteria="review by reviewer: {{review_for}}",
        ),
    ),
    parameters={"piece": "the text", "review_for": "clear, correct and complete"},
)
"""Two agents in a loop: a writer drafts, a reviewer approves or sends comments back, the writer
revises in the same session; up to the writer's attempts (its rounds), every draft and comment
kept as envelopes. Built in: a workspace file of the same name takes its place."""

BUILTIN_ROUTINES: Mapping[str, Routine] = {WRITE_REVIEW_REVISE.name: WRITE_REVIEW_REVISE}


def routine_path(workspace: Path, name: str) -> Path:
    return workspace / ROUTINES_DIR / f"{check_name(name)}.json"


def save(workspace: Path, routine: Routine) -> Path:
    """Write the routine atomically (a reader never sees half a file)."""
    path = routine_path(workspace, routine.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(routine.to_json(), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{routine.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
    return path


def load(workspace: Path, name: str) -> Routine:
    """Raises:
    RoutineError: no such routine, or the file is not a routine (says what is wrong)."""
    path = routine_path(workspace, name)
    try:
        if path.stat().st_size > MAX_ROUTINE_BYTES:
            raise RoutineError(f"routine {name!r} is larger than {MAX_ROUTINE_BYTES:,} bytes")
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if name in BUILTIN_ROUTINES:
            return BUILTIN_ROUTINES[name]
        raise RoutineError(f"no routine named {name!r} in {ROUTINES_DIR}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RoutineError(f"routine {name!r} is not valid JSON: {exc}") from exc
    return parse(name, data)


def parse(name: str, data: object) -> Routine:
    """Raises:
    RoutineError: not an object with a goal, parameters and tasks."""
    if not isinstance(data, dict):
        raise RoutineError(f"routine {name!r} must be a JSON object")
    raw = cast(dict[str, Any], data)
    goal, params, approved = raw.get("goal"), raw.get("parameters", {}), raw.get("approved")
    if not isinstance(goal, str) or not goal.strip():
        raise RoutineError(f"routine {name!r} needs a goal")
    if not isinstance(params, dict) or not all(
        isinstance(k, str) and isinstance(v, str)
        for k, v in cast(dict[object, object], params).items()
    ):
        raise RoutineError(f"routine {name!r}: parameters must map names to default values")
    try:
        tasks = parse_tasks(raw.get("tasks"))
    except PlanError as exc:
        raise RoutineError(f"routine {name!r}: {exc}") from exc
    return Routine(
        name=name,
        goal=goal,
        tasks=tuple(tasks),
        parameters=cast(dict[str, str], params),
        approved=approved if isinstance(approved, str) else None,
    )


def list_routines(workspace: Path) -> list[Routine | RoutineError]:
    """Every routine in the workspace, or the error that keeps one from loading."""
    return [found for _path, found in routine_files(workspace)]


def routine_files(workspace: Path) -> list[tuple[Path, Routine | RoutineError]]:
    """Each routine file in the workspace, by name, with its routine or the error that keeps it
    from loading (a file whose name is no routine name is listed with that error)."""
    folder = workspace / ROUTINES_DIR
    found: list[tuple[Path, Routine | RoutineError]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            found.append((path, load(workspace, path.stem)))
        except RoutineError as exc:
            found.append((path, exc))
    saved = {path.stem for path, _ in found}
    for name, routine in BUILTIN_ROUTINES.items():
        if name not in saved:  # where it would be saved once approved or edited
            found.append((routine_path(workspace, name), routine))
    return found


def mark_approved(workspace: Path, routine: Routine) -> Routine:
    """Record that the author approved the routine as it is now."""
    approved = replace(routine, approved=routine.digest)
    save(workspace, approved)
    return approved


def parse_args(text: str) -> tuple[str, dict[str, str]]:
    """`name key=value key="value with spaces"` as typed after `/routine`.

    Raises:
        RoutineError: no name, or an argument not of the form key=value.
    """
    import shlex

    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise RoutineError(f"/routine arguments: {exc}") from exc
    if not words:
        raise RoutineError("/routine needs a routine name: /routine <name> key=value ...")
    name, args = words[0], dict[str, str]()
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise RoutineError(f"/routine argument {word!r} is not key=value")
        args[key] = value
    return check_name(name), args


def approved_instance(
    workspace: Path, name: str, args: Mapping[str, str], goal: str, tasks: Sequence[TaskSpec]
) -> bool:
    """Whether `goal` and `tasks` are exactly a run of routine `name` with `args`, as the author
    approved it. This is checked against the file, never taken from a tool call's arguments, so
    nothing but an unchanged, approved routine skips plan approval."""
    try:
        routine = load(workspace, name)
        expected = instantiate(routine, args)
    except RoutineError:
        return False
    return not routine.needs_approval and expected == (goal, list(tasks))


def approve_instance(workspace: Path, name: str) -> None:
    """The author approved a run of routine `name`: its current content is approved."""
    try:
        routine = load(workspace, name)
    except RoutineError:
        return
    if routine.needs_approval:
        mark_approved(workspace, routine)
