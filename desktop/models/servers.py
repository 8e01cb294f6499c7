"""Plugged-in MCP servers and standing grants as plain Python state (no Qt).

`ServersState` holds the sidecar's last `server/list` and applies `server/status` notifications;
`GrantsState` holds the last `grant/list`. The panels follow their events. The helpers below turn
config fields to and from the text the edit dialog shows, and wire results into readable text.
"""

from __future__ import annotations

import time
from typing import Literal, TypeAlias

from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ApprovalInterrupt,
    ApprovalValue,
    ConfigIssueInfo,
    GrantInfo,
    InterruptInfo,
    LaunchPreviewInfo,
    ServerImportResult,
    ServerInfo,
    ServerListResult,
    ServerLogsResult,
    ServerState,
    ServerStatusParams,
    ServerTestResult,
)

Light: TypeAlias = Literal["green", "amber", "red", "grey"]

_LIGHTS: dict[ServerState, Light] = {
    "ready": "green",
    "starting": "amber",
    "backoff": "amber",
    "degraded": "amber",
    "crashed": "red",
    "stopped": "grey",
    "disabled": "grey",
}


def light_for(state: ServerState) -> Light:
    """The status light colour for a server state."""
    return _LIGHTS.get(state, "grey")


def describe_server(server: ServerInfo) -> str:
    """One line about a server's state, e.g. `backoff (retry in 4s), 3 restarts`."""
    text = server.state
    if server.state == "backoff" and server.retry_in_s is not None:
        text += f" (retry in {server.retry_in_s:.0f}s)"
    if server.restarts:
        text += f", {server.restarts} restart" + ("s" if server.restarts != 1 else "")
    return text


class ServersState:
    """Every server as the sidecar last described it, in list order.

    Events: `reset()` after structural changes (list replaced, server added or removed),
    `updated(row)` when one server's status changed in place.
    """

    def __init__(self) -> None:
        self._servers: list[ServerInfo] = []
        self.config_issues: tuple[ConfigIssueInfo, ...] = ()
        self.config_path = ""
        self.reset: Emitter[[]] = Emitter()
        self.updated: Emitter[[int]] = Emitter()

    @property
    def servers(self) -> tuple[ServerInfo, ...]:
        return tuple(self._servers)

    def __len__(self) -> int:
        return len(self._servers)

    def row_of(self, name: str) -> int | None:
        for row, server in enumerate(self._servers):
            if server.name == name:
                return row
        return None

    def get(self, name: str) -> ServerInfo | None:
        row = self.row_of(name)
        return None if row is None else self._servers[row]

    def set_list(self, result: ServerListResult) -> None:
        self._servers = list(result.servers)
        self.config_issues = result.config_issues
        self.config_path = result.config_path
        self.reset.emit()

    def upsert(self, server: ServerInfo) -> None:
        """Replace the server with the same name, or append it."""
        row = self.row_of(server.name)
        if row is None:
            self._servers.append(server)
            self.reset.emit()
        elif self._servers[row] != server:
            self._servers[row] = server
            self.updated.emit(row)

    def remove(self, name: str) -> None:
        row = self.row_of(name)
        if row is not None:
            del self._servers[row]
            self.reset.emit()

    def apply_status(self, params: ServerStatusParams) -> None:
        """Apply one `server/status` notification."""
        if params.removed:
            self.remove(params.server.name)
        else:
            self.upsert(params.server)


GrantKey: TypeAlias = tuple[str | None, str, str, str | None, str | None]
"""(thread_id, server, tool, plan_id, task_id): what identifies an approval (thread None: every
thread; plan and task set: a grant an approved plan minted for one of its tasks)."""


def grant_key(grant: GrantInfo) -> GrantKey:
    return (grant.thread_id, grant.server, grant.tool, grant.plan_id, grant.task_id)


def grant_scope(grant: GrantInfo) -> str:
    """Where the grant holds, in words: a plan's task (and the paths whose changes it accepts),
    or every call in its thread(s)."""
    if grant.plan_id is None:
        return "this thread" if grant.thread_id else "every thread, until revoked"
    text = f"plan “{grant.plan_goal or grant.plan_id}”, task {grant.task_id}, until the plan ends"
    if grant.paths:
        text += f"; accepts changes in {', '.join(grant.paths)}"
    return text


def grant_notice(interrupt: InterruptInfo, value: object) -> str | None:
    """What an approval answer left standing, in words (None: nothing stands after it): "Always
    allow" holds in every thread until revoked, "Allow for this thread" in its thread."""
    if not isinstance(interrupt, ApprovalInterrupt) or not isinstance(value, ApprovalValue):
        return None
    if interrupt.memory is not None:
        return None  # a memory change is saved once: no grant is kept
    name = f"{interrupt.server} · {interrupt.tool}"
    if value.decision == "allow_always":
        return f"{name} now runs without asking in every thread, until you revoke it in Grants."
    if value.decision == "allow_thread":
        return f"{name} now runs without asking in this thread, until you revoke it in Grants."
    return None


class GrantsState:
    """Every standing approval from the last `grant/list`. Event: `reset()` on any change."""

    def __init__(self) -> None:
        self._grants: list[GrantInfo] = []
        self.reset: Emitter[[]] = Emitter()

    @property
    def grants(self) -> tuple[GrantInfo, ...]:
        return tuple(self._grants)

    def __len__(self) -> int:
        return len(self._grants)

    def set_all(self, grants: tuple[GrantInfo, ...] | list[GrantInfo]) -> None:
        self._grants = list(grants)
        self.reset.emit()

    def remove(self, key: GrantKey) -> None:
        kept = [grant for grant in self._grants if grant_key(grant) != key]
        if len(kept) != len(self._grants):
            self._grants = kept
            self.reset.emit()


def parse_key_values(text: str, what: str = "line") -> dict[str, str]:
    """`KEY=value` lines (blank lines and `#` comments skipped) into a dict.

    Raises:
        ValueError: a line has no `=` or an empty key.
    """
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} {number}: expected KEY=value, got {line!r}")
        values[key.strip()] = value.strip()
    return values


def format_key_values(values: dict[str, str]) -> str:
    return "\n".join(f"{key}={value}" for key, value in values.items())


def parse_lines(text: str) -> tuple[str, ...]:
    """Non-blank lines, stripped (args, one per line; tool names)."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def format_preview(preview: LaunchPreviewInfo) -> str:
    """A launch preview as plain text: what would run, where, with which keys."""
    lines = [f"Transport: {preview.transport}"]
    if preview.command is not None:
        lines.append(f"Command: {preview.command}")
        lines.append(f"Resolves to: {preview.resolved_command or '(not found on PATH)'}")
        lines.append(f"Arguments: {' '.join(preview.args) or '(none)'}")
        lines.append(f"Working directory: {preview.cwd or '(default)'}")
    if preview.url is not None:
        lines.append(f"URL: {preview.url}")
        lines.append(f"Header keys: {', '.join(preview.header_keys) or '(none)'}")
    lines.append(f"Environment keys: {', '.join(preview.env_keys) or '(none)'}")
    if preview.placeholders:
        lines.append(f"Placeholders: {', '.join(preview.placeholders)}")
    lines.append("PATH:")
    lines.extend(f"  {entry}" for entry in preview.path)
    if preview.problems:
        lines.append("Problems:")
        lines.extend(f"  {problem}" for problem in preview.problems)
    return "\n".join(lines)


def format_test_result(result: ServerTestResult) -> str:
    head = "Connected" if result.ok else "Failed"
    lines = [f"{head} in {result.elapsed_s:.2f}s (state: {result.state})"]
    if result.error:
        lines.append(f"Error: {result.error}")
    lines.append(f"Tools ({len(result.tools)}): {', '.join(result.tools) or '(none)'}")
    if result.stderr:
        lines.append("Stderr:")
        lines.extend(f"  {line}" for line in result.stderr)
    return "\n".join(lines)


def format_issue(issue: ConfigIssueInfo) -> str:
    where = ".".join(part for part in (issue.server, issue.field) if part)
    return f"{where}: {issue.message}" if where else issue.message


def format_import_result(result: ServerImportResult) -> str:
    lines = [f"Added: {', '.join(result.added) or '(nothing)'}"]
    if result.skipped:
        lines.append("Skipped:")
        lines.extend(f"  {format_issue(issue)}" for issue in result.skipped)
    return "\n".join(lines)


def format_protocol_log(logs: ServerLogsResult) -> str:
    arrows = {"out": "→", "in": "←", "host": "·"}
    return "\n".join(
        f"{time.strftime('%H:%M:%S', time.localtime(entry.at))} {arrows[entry.direction]} "
        f"{entry.text}"
        for entry in logs.protocol
    )


def format_when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
