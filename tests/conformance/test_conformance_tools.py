"""The conformance runner's own parts: reading the suite's scenario lists and results, and the
arguments the client adapter makes from a tool's input schema."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conformance.client import example_arguments, planned_calls
from tests.conformance.results import Tally, read_result, shortfalls, wire_violations
from tests.conformance.runner import scenario_list

LISTING = """Required for 2026-07-28 (3 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - tools-list

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default

Run and reported, but never scored:
  extension (1):
    - auth/client-credentials-jwt [client]
"""


def write_checks(folder: Path, name: str, checks: list[dict[str, str]]) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "checks.json").write_text(json.dumps(checks))


def test_a_listing_gives_the_required_scenarios_of_one_role():
    assert scenario_list(LISTING, "Client") == ["tools_call", "auth/metadata-default"]
    assert scenario_list(LISTING, "Server") == ["tools-list"]
    assert scenario_list(
        "Client scenarios (test against a client):\n  - sse-retry [2025-11-25]\n", "Client"
    ) == ["sse-retry"]


def test_a_scenario_passes_without_failures_but_for_the_excused_ones(tmp_path: Path):
    write_checks(
        tmp_path,
        "server-server-stateless-2026-11-28T10-00-00Z",
        [
            {"id": "sep-2575-discover", "status": "SUCCESS"},
            {"id": "sep-2575-missing-capability-http-400", "status": "FAILURE"},
            {"id": "sep-2575-listen", "status": "WARNING"},
        ],
    )
    write_checks(
        tmp_path,
        "server-ping-2026-11-28T10-00-01Z",
        [{"id": "wire-schema-valid", "status": "FAILURE"}],
    )
    pattern = "server-{}-[0-9]*/checks.json"
    stateless = read_result(
        "server-stateless",
        tmp_path,
        {"sep-2575-missing-capability-http-400"},
        pattern=pattern.format("server-stateless"),
    )
    ping = read_result("ping", tmp_path, pattern=pattern.format("ping"))
    missing = read_result("tools-list", tmp_path, pattern=pattern.format("tools-list"))
    assert (stateless.passed, ping.passed, missing.found) == (True, False, False)
    tally = Tally("server x", [stateless, ping, missing], wire_violations(tmp_path))
    assert (tally.passed, tally.total, tally.wire_violations) == (1, 3, 1)
    assert shortfalls([tally], {"server x": 1}) == ["server x: 1 wire-schema violation(s)"]
    assert shortfalls([tally], {"server x": 2})[0] == "server x: 1 passed, below the floor of 2"


def test_the_adapter_calls_what_the_context_names_else_every_tool_with_simple_arguments():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "n": {"type": "integer", "default": 3},
            "extra": {"type": "string"},
        },
        "required": ["a", "mode", "n"],
    }
    assert example_arguments(schema) == {"a": 1, "mode": "fast", "n": 3}
    tools = [{"tool": "add", "input_schema": schema}]
    assert planned_calls(tools, {}) == [("add", {"a": 1, "mode": "fast", "n": 3})]
    named = {"toolCalls": [{"name": "echo", "arguments": {"x": 1}}]}
    assert planned_calls(tools, named) == [("echo", {"x": 1})]
