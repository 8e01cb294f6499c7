"""`HostFeatures` without server-everything: what it advertises, and an in-process 2026-07-28
server (the SDK's `MCPServer`) whose logs and roots requests go through the same callbacks."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning

from sidecar.host.features.client import HostFeatures, NoFeatures
from sidecar.host.host import ServerSpec, ToolHost
from tests.sidecar.host.features.conftest import FeatureRig, ScriptedAuthor, ensure_connected

pytestmark = pytest.mark.anyio


def build_chatty_server() -> MCPServer:
    server = MCPServer(name="chatty")

    @server.tool()
    async def shout(text: str, ctx: Context) -> str:
        """Logs the text at warning level, then returns it."""
        with warnings.catch_warnings():  # logging is deprecated in 2026-07-28, still delivered
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await ctx.warning(f"shouting {text}")
        return text.upper()

    return server


@pytest.fixture
async def chatty(tmp_path: Path) -> AsyncIterator[FeatureRig]:
    features = HostFeatures(tmp_path)
    host = ToolHost([ServerSpec("chatty", build_chatty_server)], features=features)
    await host.wait_ready()
    await ensure_connected(host, features, "chatty")
    yield FeatureRig(host, features, ScriptedAuthor(), tmp_path)
    await host.aclose()


async def sampler(request: Any) -> Any:
    raise AssertionError("not called")


def test_sampling_is_advertised_only_with_a_model_to_answer(tmp_path: Path) -> None:
    without = HostFeatures(tmp_path).client_kwargs("srv")
    with_model = HostFeatures(tmp_path, sampler=sampler).client_kwargs("srv")
    assert "sampling_callback" not in without
    assert "sampling_callback" in with_model
    for key in ("elicitation_callback", "list_roots_callback", "logging_callback"):
        assert key in without
    assert without["log_level"] == "info"
    assert NoFeatures().client_kwargs("srv") == {}


async def test_a_level_for_a_server_not_connected_applies_from_its_next_connection(
    tmp_path: Path,
) -> None:
    features = HostFeatures(tmp_path)
    assert await features.set_log_level("later", "debug") is False
    assert features.client_kwargs("later")["log_level"] == "debug"


async def test_an_in_process_modern_server_logs_into_its_buffer(chatty: FeatureRig) -> None:
    outcome = await chatty.host.call("chatty__shout", {"text": "hi"})

    assert outcome.text == "HI"
    entries = chatty.features.logs.entries("chatty", min_level="warning")
    assert [(e.level, e.text, e.source) for e in entries] == [("warning", "shouting hi", "server")]
    assert chatty.features.connected_servers() == ["chatty"]


async def test_a_modern_server_takes_a_new_level_on_its_next_connection(
    chatty: FeatureRig,
) -> None:
    assert await chatty.features.set_log_level("chatty", "error") is False
    assert chatty.features.logs.level("chatty") == "error"
