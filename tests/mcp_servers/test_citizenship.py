"""Atrium's own servers as good MCP citizens, each of the six alike: the package's version as
`serverInfo.version`, only the tools capability (no prompts or resources they do not have), an
output schema on every tool and a description on every parameter, and `--http HOST:PORT`
serving streamable HTTP with the SDK's DNS-rebinding protection."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcp_servers.serving import package_version, parse_http_address, transport_security
from tests.mcp_servers.builtin import SERVERS, built_in_servers, http_server

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]  # the 2025-11-25 handshake, and 2026-07-28 through discovery


def server_named(name: str, tmp: Path) -> Any:
    return dict(built_in_servers(tmp))[name]


def capabilities(client: Client) -> dict[str, Any]:
    return client.server_capabilities.model_dump(exclude_none=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SERVERS)
async def test_a_built_in_server_reports_its_version_and_offers_tools_only(
    tmp_path: Path, name: str, mode: str
):
    async with Client(server_named(name, tmp_path), mode=mode, raise_exceptions=True) as client:
        assert client.server_info is not None
        assert client.server_info.version == package_version() != ""
        assert set(capabilities(client)) == {"tools"}


@pytest.mark.parametrize("name", SERVERS)
async def test_every_tool_has_an_output_schema_and_every_parameter_a_description(
    tmp_path: Path, name: str
):
    async with Client(server_named(name, tmp_path), raise_exceptions=True) as client:
        tools = (await client.list_tools()).tools
    assert tools
    for tool in tools:
        assert tool.output_schema is not None, tool.name
        properties: dict[str, Any] = tool.input_schema.get("properties", {})
        undescribed = [p for p, schema in properties.items() if not schema.get("description")]
        assert undescribed == [], tool.name


async def test_the_memory_servers_structured_content_fits_its_output_schema(tmp_path: Path):
    async with Client(server_named("memory", tmp_path), raise_exceptions=True) as client:
        saved = await client.call_tool(
            "write", {"text": "The author takes tea.", "tier": "account"}
        )
        listed = await client.call_tool("list", {})
    assert not saved.is_error and not listed.is_error
    assert listed.structured_content is not None
    [memory] = listed.structured_content["memories"]
    assert (memory["text"], memory["tier"]) == ("The author takes tea.", "account")


@pytest.mark.parametrize("name", SERVERS)
async def test_arguments_that_do_not_fit_are_refused_naming_the_field(tmp_path: Path, name: str):
    async with Client(server_named(name, tmp_path), raise_exceptions=True) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.input_schema.get("required"))
        refused = await client.call_tool(tool.name, {})
    assert refused.is_error
    [block] = refused.content
    text = getattr(block, "text", "")
    field = tool.input_schema["required"][0]
    assert text.startswith(f"Error executing tool {tool.name}: invalid arguments (")
    assert f"{field}: field required" in text
    assert "\n" not in text and "pydantic.dev" not in text


async def test_a_plain_mcp_server_still_advertises_prompts_and_resources():
    """Why `mcp_servers.serving.offer_tools_only` exists: when this fails, the SDK leaves out
    capabilities a server has nothing for, and the workaround can go."""
    async with Client(MCPServer("plain"), mode="legacy", raise_exceptions=True) as client:
        assert {"prompts", "resources"} <= set(capabilities(client))


def test_http_addresses_are_host_and_port():
    assert parse_http_address("127.0.0.1:8765").url == "http://127.0.0.1:8765/mcp"
    assert parse_http_address("[::1]:80").url == "http://[::1]:80/mcp"
    for bad in ("8765", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:x", ":80"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_http_address(bad)


def test_a_non_loopback_address_accepts_only_its_own_host_header():
    settings = transport_security(parse_http_address("192.0.2.7:9000"))
    assert settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == ["192.0.2.7:9000"]
    assert settings.allowed_origins == ["http://192.0.2.7:9000"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SERVERS)
async def test_with_http_a_built_in_server_serves_streamable_http_and_refuses_rebinding(
    tmp_path: Path, name: str
):
    async with http_server(name, tmp_path) as url:
        async with Client(url, raise_exceptions=True) as client:
            assert client.server_info is not None
            assert client.server_info.version == package_version()
            assert (await client.list_tools()).tools
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as http:
            rebound = await http.post(url, json=ping, headers={**headers, "Host": "evil.test"})
            foreign = await http.post(
                url, json=ping, headers={**headers, "Origin": "http://evil.test"}
            )
    assert (rebound.status_code, foreign.status_code) == (421, 403)
