"""Pure per-provider parsers: stdout lines in, normalized events and a final result out."""

from __future__ import annotations

from collections.abc import Iterable

from mcp_servers.agents.events import AgentEvent
from mcp_servers.agents.parsers.base import ParseStep, RunAccumulator, StreamParser
from mcp_servers.agents.parsers.claude import ClaudeStreamParser
from mcp_servers.agents.parsers.codex import CodexStreamParser
from mcp_servers.agents.parsers.openclaw import OpenClawOutputParser
from mcp_servers.agents.parsers.outcome import RunFacts, build_result, terminal_event
from mcp_servers.agents.results import OperatorResult, Provider

__all__ = [
    "ClaudeStreamParser",
    "CodexStreamParser",
    "OpenClawOutputParser",
    "ParseStep",
    "RunAccumulator",
    "RunFacts",
    "StreamParser",
    "build_result",
    "make_parser",
    "replay_lines",
    "terminal_event",
]


def make_parser(provider: Provider) -> StreamParser:
    """A fresh parser for `provider`'s stdout."""
    if provider == "claude":
        return ClaudeStreamParser()
    if provider == "codex":
        return CodexStreamParser()
    return OpenClawOutputParser()


def replay_lines(
    provider: Provider, lines: Iterable[str], *, run_id: str = "replay"
) -> tuple[list[AgentEvent], OperatorResult]:
    """Parse a recorded stdout transcript: its events (terminal event last) and result.

    No process is involved, so no exit code, stop reason or trace is known.
    """
    parser = make_parser(provider)
    events: list[AgentEvent] = []
    for line in lines:
        events.extend(parser.feed(line.rstrip("\r\n")).events)
    events.extend(parser.finish())
    result = build_result(parser.acc, RunFacts(run_id=run_id, provider=provider))
    events.append(terminal_event(result))
    return events, result
