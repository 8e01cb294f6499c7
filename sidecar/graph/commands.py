"""Direct commands typed by the author: they run without a model.

`/tools` lists tools; `/call <server>__<tool> {json args}` runs one through the tool node with
the same permission checks as a model's call; `/delegate` and `/plan` dispatch subagents;
`/routine <name> key=value ...` runs a saved routine (no planning call); `/skill new <name>`
has the Skill Composer draft a skill from the conversation or a plan; `/compact` summarizes the
thread's older messages now (the context node does it; the answer says what happened).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from sidecar.json_value import lone_surrogate
from sidecar.plans.routines import RoutineError
from sidecar.plans.routines import parse_args as parse_routine_args
from sidecar.plans.skill_draft import TARGETS, DraftError, Target, check_name


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


@dataclass(frozen=True, slots=True)
class SkillCommand:
    """`/skill new <name> [from plan <plan_id>] [to workspace|account]`: compose a skill."""

    name: str
    plan_id: str | None = None
    target: Target = "workspace"


@dataclass(frozen=True, slots=True)
class CompactCommand:
    """`/compact`: summarize the messages older than the recent ones now."""


Command = (
    ToolsCommand
    | CallCommand
    | DelegateCommand
    | PlanCommand
    | RoutineCommand
    | SkillCommand
    | CompactCommand
)

USAGE = (
    "Commands: /tools, /call <server>__<tool> {json arguments}, "
    '/delegate <profile> <task> (or /delegate {"tasks": [...]}), '
    '/plan {"goal": ..., "tasks": [...]}, /routine <name> key=value ..., /compact'
)


def _call(rest: str) -> CallCommand:
    name, _, raw_args = rest.strip().partition(" ")
    if not name:
        raise CommandError(f"/call needs a tool name. {USAGE}")
    try:
        args: object = json.loads(raw_args) if raw_args.strip() else {}
    except json.JSONDecodeError as exc:
        raise CommandError(f"arguments are not valid JSON ({exc.msg}). {USAGE}") from exc
    if not isinstance(args, dict):
        raise CommandError(f"arguments must be a JSON object. {USAGE}")
    arguments = cast(dict[str, Any], args)
    where = lone_surrogate(arguments)
    if where is not None:
        at = "/".join(map(str, where))
        raise CommandError(f"arguments hold a lone UTF-16 surrogate (at {at}), which is no text")
    return CallCommand(name=name, arguments=arguments)


_BARE: dict[str, type[ToolsCommand | CompactCommand]] = {
    "/tools": ToolsCommand,
    "/compact": CompactCommand,
}
"""Commands that take no arguments."""


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def is_call(text: str) -> bool:
    """A `/call`: when its tool fails, the failed call is the whole report (stored and shown
    as a failed call), never restated as a plain answer."""
    return text.strip().partition(" ")[0] == "/call"


def is_compact(text: str) -> bool:
    return text.strip() == "/compact"


def parse_command(text: str) -> Command:
    """Raises:
    CommandError: unknown command or bad arguments."""
    head, _, rest = text.strip().partition(" ")
    if head in _BARE:
        if rest.strip():
            raise CommandError(f"{head} takes no arguments. {USAGE}")
        return _BARE[head]()
    if head == "/call":
        return _call(rest)
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
        return _routine(rest)
    if head == "/skill":
        return _skill(rest)
    raise CommandError(f"unknown command {head!r}. {USAGE}")


def _routine(rest: str) -> RoutineCommand:
    try:
        name, args = parse_routine_args(rest)
    except RoutineError as exc:
        raise CommandError(f"{exc}. {USAGE}") from exc
    return RoutineCommand(name=name, args=args)


def _skill(rest: str) -> SkillCommand:
    words = rest.split()
    if len(words) < 2 or words[0] != "new":
        raise CommandError(f"/skill needs 'new' and a name. {USAGE}")
    name, options = words[1], words[2:]
    try:
        check_name(name)
    except DraftError as exc:
        raise CommandError(str(exc)) from exc
    plan_id: str | None = None
    target: Target = "workspace"
    while options:
        if options[:2] == ["from", "plan"] and len(options) >= 3:
            plan_id, options = options[2], options[3:]
        elif options[0] == "to" and len(options) >= 2 and options[1] in TARGETS:
            target = "account" if options[1] == "account" else "workspace"
            options = options[2:]
        else:
            raise CommandError(f"/skill: cannot read {' '.join(options)!r}. {USAGE}")
    return SkillCommand(name=name, plan_id=plan_id, target=target)
