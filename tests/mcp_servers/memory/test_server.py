"""The memory tools over the SDK's in-memory transport: results, refusals, scope, guidance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mcp_servers.memory import MemoryStore, Scope, build_server, public_schema

from .conftest import error_code, text_of

pytestmark = pytest.mark.anyio

HERE = {"thread": "t1", "workspace": "/books/river"}


@pytest.fixture
async def client(store: MemoryStore) -> AsyncIterator[Client]:
    server = build_server(store, Scope(thread="default", workspace="/standalone"))
    async with Client(server, raise_exceptions=True) as connected:
        yield connected


async def call(client: Client, name: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(name, arguments)


async def test_the_server_offers_the_seven_memory_tools_with_honest_annotations(
    client: Client,
) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == ["forget", "list", "pin", "read", "search", "update", "write"]
    for name, tool in tools.items():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in ("list", "read", "search"))


async def test_the_write_tool_tells_the_model_when_to_save_and_when_not(client: Client) -> None:
    write = next(t for t in (await client.list_tools()).tools if t.name == "write")
    description = write.description or ""
    assert "preferences" in description and "Do not save" in description


async def test_the_model_sees_no_host_filled_scope_arguments(client: Client) -> None:
    write = next(t for t in (await client.list_tools()).tools if t.name == "write")
    shown = public_schema(write.input_schema)
    assert set(shown["properties"]) == {"text", "tier", "pinned", "source_message"}
    assert shown["required"] == ["text"]


async def test_write_then_search_read_list_pin_update_forget(client: Client) -> None:
    saved = await call(client, "write", text="The editor is Zofia", tier="workspace", **HERE)
    key = saved.structured_content["memories"][0]["key"]  # type: ignore[index]
    found = await call(client, "search", query="who edits?  editor", **HERE)
    assert key in text_of(found)
    assert "The editor is Zofia" in text_of(await call(client, "read", key=key, **HERE))
    await call(client, "pin", key=key, **HERE)
    listed = await call(client, "list", pinned_only=True, **HERE)
    assert listed.structured_content["memories"][0]["pinned"] is True  # type: ignore[index]
    await call(client, "update", key=key, text="The editor is Anna", **HERE)
    assert "Anna" in text_of(await call(client, "read", key=key, **HERE))
    await call(client, "forget", key=key, **HERE)
    assert error_code(await call(client, "read", key=key, **HERE)) == "not_found"


async def test_a_call_without_scope_uses_the_servers_own(
    client: Client, store: MemoryStore
) -> None:
    await call(client, "write", text="Standalone fact", tier="thread")
    assert [m.source_thread for m in store.recent(Scope(thread="default"), ["thread"])] == [
        "default"
    ]


async def test_another_threads_thread_memory_cannot_be_read_or_changed(client: Client) -> None:
    saved = await call(client, "write", text="Private to t1", tier="thread", **HERE)
    key = saved.structured_content["memories"][0]["key"]  # type: ignore[index]
    elsewhere = {"thread": "t2", "workspace": "/books/river"}
    assert error_code(await call(client, "read", key=key, **elsewhere)) == "not_found"
    assert error_code(await call(client, "forget", key=key, **elsewhere)) == "not_found"
    assert (
        text_of(await call(client, "search", query="private", **elsewhere)) == "No memory matches."
    )


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"text": "fact", "tier": "cosmos"}, "unknown_tier"),
        ({"text": ""}, "empty_text"),
        ({"text": "y" * 1_000_000}, "too_long"),
        ({"text": "fact", "tier": "channel"}, "no_scope"),
    ],
)
async def test_each_bad_write_is_an_error_result_with_its_code(
    client: Client, store: MemoryStore, arguments: dict[str, Any], code: str
) -> None:
    assert error_code(await call(client, "write", **arguments, **HERE)) == code
    assert store.count() == 0


@pytest.mark.parametrize("query", ['"', "NEAR(", "*", 'a "b* NEAR(c d', ")))"])
async def test_search_with_fts_syntax_is_a_sane_result(client: Client, query: str) -> None:
    result = await call(client, "search", query=query, **HERE)
    assert not result.is_error
