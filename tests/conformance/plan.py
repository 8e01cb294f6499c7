"""What the conformance run runs: which suite versions and requirement sets against the host
(the client suite), and which server scenarios against each built-in server.

Client suite: every scenario of the stable 0.1.16, and exactly what the newest alpha's
requirement sets name for the 2025-11-25 and 2026-07-28 revisions (listed by the suite itself,
`list --client --requirements <revision>`), each run at its revision's wire.

Server suite: the scenarios that need no test fixture, since a built-in server offers its own
tools and no `test_*` tool, resource or prompt of the suite's reference server. Left out:
the scenarios that call such fixtures (`tools-call-*`, `resources-*`, `prompts-*`,
`elicitation-*`, `input-required-result-*`, `json-schema-2020-12`, `server-sse-polling`,
`caching`, which lists prompts and resources of the reference server), those of capabilities the
built-in servers do not offer (`logging-set-level`: logging is deprecated and none of them logs;
`completion-complete`: they have no prompts or resource templates to complete), and the Tasks
extension. Two checks of `server-stateless` need the suite's diagnostic tool
`test_missing_capability` and are excused (`EXCUSED`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.setup.conformance import ALPHA, STABLE

SERVERS = ("workspace", "memory", "schedule", "skills", "sandbox", "agents")


@dataclass(frozen=True)
class ClientRun:
    """One list of client scenarios: all of `version`'s, or a requirement set's."""

    label: str
    version: str
    requirements: str | None = None


@dataclass(frozen=True)
class ServerRun:
    """A server run of `version`: its active suite, or a requirement set's scenarios (one
    invocation, every scenario), scored on the fixture-free `scenarios`."""

    label: str
    version: str
    requirements: str | None
    scenarios: tuple[str, ...]


CLIENT_RUNS = (
    ClientRun("client 0.1.16", STABLE),
    ClientRun("client 0.2.0-alpha.12 @2025-11-25", ALPHA, "2025-11-25"),
    ClientRun("client 0.2.0-alpha.12 @2026-07-28", ALPHA, "2026-07-28"),
)

_HANDSHAKE = ("server-initialize", "ping", "tools-list", "server-sse-multiple-streams")
SERVER_RUNS = (
    ServerRun("0.1.16", STABLE, None, (*_HANDSHAKE, "dns-rebinding-protection")),
    ServerRun(
        "0.2.0-alpha.12 @2025-11-25",
        ALPHA,
        "2025-11-25",
        (*_HANDSHAKE, "dns-rebinding-protection", "server-session-lifecycle"),
    ),
    ServerRun(
        "0.2.0-alpha.12 @2026-07-28",
        ALPHA,
        "2026-07-28",
        (
            "server-stateless",
            "tools-list",
            "server-sse-multiple-streams",
            "dns-rebinding-protection",
            "sep-2164-resource-not-found",
        ),
    ),
)

EXCUSED: dict[str, frozenset[str]] = {
    "server-stateless": frozenset(
        {"sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400"}
    ),
}
"""Checks that need a fixture the built-in servers do not have, by scenario."""


def server_label(server: str, run: ServerRun) -> str:
    return f"server {server} {run.label}"
