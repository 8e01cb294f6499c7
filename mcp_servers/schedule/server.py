"""The schedule MCP server: create, list, update, pause, resume, delete and run schedules.

`build_server(book)` serves one `ScheduleBook`. Inside Atrium it runs in-process on the
sidecar's database (the sidecar's scheduler fires the schedules); standalone it works on the
database file it is given, and an Atrium sidecar on that folder picks the changes up. Tools that
change something are not read-only, so a host asks the author before they run. Refusals are
`isError` results reading `[<code>] <message>`.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from mcp_servers.serving import build_mcp_server

from .book import DEFAULT_DENY_AFTER_MINUTES, MAX_DENY_AFTER_MINUTES, Fire, ScheduleBook
from .errors import ScheduleRefusal
from .timing import utc_iso

SERVER_NAME = "atrium-schedule"

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

IdArg = Annotated[str, Field(description="The schedule's id (from list or create).")]
KindArg = Annotated[
    Literal["once", "interval", "cron"],
    Field(
        description="'once': spec is an ISO time; 'interval': spec is seconds or '15m', '2h', "
        "'1d'; 'cron': spec is 5 fields 'minute hour day month weekday'."
    ),
]
TzArg = Annotated[
    str | None,
    Field(description="IANA time zone, e.g. 'Europe/Berlin'. Empty: the workspace's zone."),
]
PolicyArg = Annotated[
    Literal["run_once", "skip"],
    Field(
        description="Times missed while Atrium was closed: 'run_once' runs once for all of "
        "them when it starts; 'skip' records them as skipped."
    ),
]

UnattendedArg = Annotated[
    Literal["wait", "deny_after", "skip"],
    Field(
        description="A question of the run that nobody answers (it runs while the author is "
        "away): 'wait' notifies the author and waits; 'deny_after' answers no after "
        "deny_after_minutes and the run goes on; 'skip' ends the run at its first question."
    ),
]
MinutesArg = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_DENY_AFTER_MINUTES,
        description="With unattended 'deny_after': minutes a question waits before the no.",
    ),
]


@contextmanager
def _refusals() -> Generator[None]:
    try:
        yield
    except ScheduleRefusal as exc:
        raise ToolError(str(exc)) from exc


def _fire(fire: Fire) -> dict[str, Any]:
    return {
        "scheduled_for": utc_iso(fire.scheduled_for),
        "status": fire.status,
        "reason": fire.reason,
        "run_id": fire.run_id,
        "thread_id": fire.thread_id,
        "missed": fire.missed,
        "manual": fire.manual,
    }


def build_server(book: ScheduleBook) -> MCPServer:
    server = build_mcp_server(
        SERVER_NAME,
        title="Atrium schedules",
        instructions=(
            "Schedules that run a prompt later: once at a time, every interval, or on a cron "
            f"pattern, in a time zone (default {book.default_timezone}). Show the author the "
            "next fire times that create returns."
        ),
    )

    @server.tool(name="create", title="Create a schedule", annotations=_WRITES)
    def create(  # noqa: PLR0917 - an MCP tool's arguments
        kind: KindArg,
        spec: Annotated[str, Field(description="When; see kind.")],
        prompt: Annotated[str, Field(description="What the agent is asked when it fires.")],
        timezone: TzArg = None,
        thread_id: Annotated[
            str | None, Field(description="Run on this thread; empty: a new thread per run.")
        ] = None,
        name: Annotated[str, Field(description="A short name for the panel.")] = "",
        missed: PolicyArg = "run_once",
        unattended: UnattendedArg = "wait",
        deny_after_minutes: MinutesArg = DEFAULT_DENY_AFTER_MINUTES,
    ) -> dict[str, Any]:
        """Create a schedule; returns it with its next fire times in its zone."""
        with _refusals():
            return book.create(
                kind=kind,
                spec=spec,
                prompt=prompt,
                timezone=timezone or None,
                thread_id=thread_id or None,
                name=name,
                missed=missed,
                unattended=unattended,
                deny_after_minutes=deny_after_minutes,
            ).view()

    @server.tool(name="list", title="List schedules", annotations=_READ_ONLY)
    def list_() -> dict[str, Any]:
        """Every schedule with its next fire times and last result."""
        return {
            "default_timezone": book.default_timezone,
            "schedules": [s.view() for s in book.list()],
        }

    @server.tool(name="update", title="Change a schedule", annotations=_WRITES)
    def update(  # noqa: PLR0917 - an MCP tool's arguments
        schedule_id: IdArg,
        spec: Annotated[
            str | None, Field(description="New time, read as its kind reads it.")
        ] = None,
        timezone: TzArg = None,
        prompt: Annotated[str | None, Field(description="New prompt for the agent.")] = None,
        name: Annotated[str | None, Field(description="New name.")] = None,
        missed: Annotated[PolicyArg | None, Field(description="New missed-run policy.")] = None,
        unattended: Annotated[
            UnattendedArg | None, Field(description="New policy for unanswered questions.")
        ] = None,
        deny_after_minutes: Annotated[
            MinutesArg | None, Field(description="New minutes before the no (deny_after).")
        ] = None,
    ) -> dict[str, Any]:
        """Change a schedule's time, zone, prompt, name, missed-run or unattended policy."""
        with _refusals():
            return book.update(
                schedule_id,
                spec=spec,
                timezone=timezone or None,
                prompt=prompt,
                name=name,
                missed=missed,
                unattended=unattended,
                deny_after_minutes=deny_after_minutes,
            ).view()

    @server.tool(name="pause", title="Pause a schedule", annotations=_WRITES)
    def pause(schedule_id: IdArg) -> dict[str, Any]:
        """Stop firing until resumed."""
        with _refusals():
            return book.set_enabled(schedule_id, False).view()

    @server.tool(name="resume", title="Resume a schedule", annotations=_WRITES)
    def resume(schedule_id: IdArg) -> dict[str, Any]:
        """Fire again from now on (times missed while paused are not run)."""
        with _refusals():
            return book.set_enabled(schedule_id, True).view()

    @server.tool(name="delete", title="Delete a schedule", annotations=_DELETES)
    def delete(schedule_id: IdArg) -> dict[str, Any]:
        """Delete a schedule and its history."""
        with _refusals():
            book.delete(schedule_id)
        return {"deleted": schedule_id}

    @server.tool(name="run_now", title="Run a schedule now", annotations=_WRITES)
    def run_now(schedule_id: IdArg) -> dict[str, Any]:
        """Run the schedule's prompt now, once (its regular times are unchanged)."""
        with _refusals():
            return _fire(book.request_run(schedule_id))

    @server.tool(name="history", title="Schedule history", annotations=_READ_ONLY)
    def history(schedule_id: IdArg) -> dict[str, Any]:
        """Its fires, newest first, with the reason of each skip or failure."""
        with _refusals():
            return {"fires": [_fire(f) for f in book.history(schedule_id)]}

    return server
