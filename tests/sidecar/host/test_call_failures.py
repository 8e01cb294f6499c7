"""Every way a server can fail a tool call, against a real stdio server that misbehaves on
purpose (`unruly_server.py`): an invalid reply, a reply against the tool's own output schema, a
JSON-RPC error and a time-out are `is_error` outcomes with a one-line reason; a crash mid-call is
`ServerUnavailableError` (the tool node makes it a result, see tests/sidecar/graph)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sidecar.host.config import validate_entry
from sidecar.host.host import ToolHost
from sidecar.host.spec import ServerUnavailableError
from sidecar.host.types import ToolOutcome
from tests.sidecar.host.support import StatusLog

pytestmark = pytest.mark.anyio

UNRULY = str(Path(__file__).with_name("unruly_server.py"))


async def unruly(host: ToolHost, statuses: StatusLog, limit_s: float = 30) -> None:
    """Add the unruly server with a limit of `limit_s` per call; wait until it is ready."""
    config = {"command": sys.executable, "args": [UNRULY], "timeout": limit_s}
    await host.add(validate_entry("unruly", config))
    await statuses.wait_state("unruly", "ready")


def assert_one_line_failure(outcome: ToolOutcome) -> None:
    assert outcome.is_error and outcome.structured is None
    assert outcome.text and "\n" not in outcome.text
    assert "pydantic.dev" not in outcome.text and "Failed validating" not in outcome.text


async def test_a_well_formed_reply_is_an_ordinary_outcome(host: ToolHost, statuses: StatusLog):
    await unruly(host, statuses)
    assert await host.call("unruly__fine", {}) == ToolOutcome(is_error=False, text="fine")


async def test_a_reply_that_is_not_valid_mcp_is_an_error_naming_the_field(
    host: ToolHost, statuses: StatusLog
):
    await unruly(host, statuses)
    outcome = await host.call("unruly__invalid_reply", {})
    assert_one_line_failure(outcome)
    assert "content.0.text: field required" in outcome.text
    assert (await host.call("unruly__fine", {})).text == "fine"  # the session goes on


async def test_structured_content_against_the_output_schema_is_an_error_naming_the_field(
    host: ToolHost, statuses: StatusLog
):
    await unruly(host, statuses)
    outcome = await host.call("unruly__wrong_structure", {})
    assert_one_line_failure(outcome)
    assert "count: 'many' is not of type 'integer'" in outcome.text


async def test_a_json_rpc_error_is_an_error_with_its_code_on_one_line(
    host: ToolHost, statuses: StatusLog
):
    await unruly(host, statuses)
    outcome = await host.call("unruly__protocol_error", {})
    assert_one_line_failure(outcome)
    assert "-32603" in outcome.text and "the tool broke while it was thinking" in outcome.text


async def test_a_call_past_its_time_limit_is_an_error_and_marks_the_server_degraded(
    host: ToolHost, statuses: StatusLog
):
    await unruly(host, statuses, limit_s=1)
    mark = statuses.mark()
    outcome = await host.call("unruly__hang", {})
    assert_one_line_failure(outcome)
    await statuses.wait_state("unruly", "degraded", since=mark)


async def test_a_server_that_exits_mid_call_is_unavailable_with_its_last_words(
    host: ToolHost, statuses: StatusLog
):
    await unruly(host, statuses)
    with pytest.raises(ServerUnavailableError) as failure:
        await host.call("unruly__crash", {})
    assert "\n" not in str(failure.value) and "crashing" in str(failure.value)
