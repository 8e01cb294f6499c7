"""Direct commands typed by the author: they run without a model.

`/tools` lists tools; `/call <server>__<tool> {json args}` runs one through the tool node with
the same permission checks as a model's call; `/delegate` and `/plan` dispatch subagents;
`/routine <name> key=value ...` runs a saved routine (no planning call).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from sidecar.coord.routines import RoutineError
from sidecar.coord.routines import parse_args as parse_routine_args


class CommandError(ValueError):
    """The command is malformed; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class ToolsCommand:
    pass


@dataclass(frozen=True, slots=True)
class CallCommand:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DelegateCommand:
    """`/delegate <profile> <task>`, or `/delegate {"tasks": [...]}` for several at once."""

    profile: str
    task: str
    raw: str | None = None


@dataclass(frozen=True, slots=True)
class PlanCommand:
    raw: str


@dataclass(frozen=True, slots=True)
class RoutineCommand:
    """`/routine <name> key=value ...`: run a saved routine with these parameter values."""

    name: str
    args: dict[str, str]


Command = ToolsCommand | CallCommand | DelegateCommand | PlanCommand | RoutineCommand

USAGE = (
    "Commands: /tools, /call <server>__<tool> {json arguments}, "
    '/delegate <profile> <task> (or /delegate {"tasks": [...]}), '
    '/plan {"goal": ..., "tasks": [...]}, /routine <name> key=value ...'
)


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse_command(text: str) -> Command:
    """Raises:
    CommandError: unknown command or bad arguments."""
    head, _, rest = text.strip().partition(" ")
    if head == "/tools":
        return ToolsCommand()
    if head == "/call":
        name, _, raw_args = rest.strip().partition(" ")
        if not name:
            raise CommandError(f"/call needs a tool name. {USAGE}")
        try:
            args: object = json.loads(raw_args) if raw_args.strip() else {}
        except json.JSONDecodeError as exc:
            raise CommandError(f"arguments are not valid JSON ({exc.msg}). {USAGE}") from exc
        if not isinstance(args, dict):
            raise CommandError(f"arguments must be a JSON object. {USAGE}")
        return CallCommand(name=name, arguments=cast(dict[str, Any], args))
    if head == "/delegate":
        if rest.strip().startswith("{"):
            return DelegateCommand(profile="", task="", raw=rest.strip())
        profile, _, task = rest.strip().partition(" ")
        if not profile or not task.strip():
            raise CommandError(f"/delegate needs a profile and a task. {USAGE}")
        return DelegateCommand(profile=profile, task=task.strip())
    if head == "/plan":
        if not rest.strip():
            raise CommandError(f"/plan needs the plan as JSON. {USAGE}")
        return PlanCommand(raw=rest.strip())
    if head == "/routine":
        try:
            name, args = parse_routine_args(rest)
        except RoutineError as exc:
            raise CommandError(f"{exc}. {USAGE}") from exc
        return RoutineCommand(name=name, args=args)
    raise CommandError(f"unknown command {head!r}. {USAGE}")
