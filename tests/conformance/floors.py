"""The passing counts a conformance run must reach (`python -m tests.conformance` fails below
any of them, and on any wire-schema violation).

They are the counts Atrium reached when the suite entered CI; raise a floor when a change makes
more scenarios pass, never lower one to let a regression through. The client suite's OAuth
scenarios (`auth/*`) fail until the host speaks MCP authorization (issue 30, item 1): the client
floors are what passes without it (every scenario but the OAuth ones, on 2026-11-28). The
server floors are every fixture-free scenario (see `tests.conformance.plan`), on each of the six
built-in servers.
"""

from __future__ import annotations

from tests.conformance.plan import CLIENT_RUNS, SERVER_RUNS, SERVERS, server_label

CLIENT_FLOORS: dict[str, int] = {
    # initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry, auth/resource-mismatch
    "client 0.1.16": 5,
    # initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry
    "client 0.2.0-alpha.12 @2025-11-25": 4,
    # tools_call, request-metadata, sep-2322-client-request-state, http-standard-headers,
    # http-custom-headers, http-invalid-tool-headers, json-schema-ref-no-deref
    "client 0.2.0-alpha.12 @2026-07-28": 7,
}

SERVER_FLOORS: dict[str, int] = {
    server_label(server, run): len(run.scenarios) for server in SERVERS for run in SERVER_RUNS
}

FLOORS: dict[str, int] = {**CLIENT_FLOORS, **SERVER_FLOORS}

assert set(CLIENT_FLOORS) == {run.label for run in CLIENT_RUNS}
