"""A memory store on a fresh file, plus helpers for tool results."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.types import CallToolResult, TextContent

from mcp_servers.memory import MemoryStore

_CODE = re.compile(r"\[([a-z_]+)\]")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(tmp_path / "memory.db")
    yield opened
    opened.close()


def error_code(result: CallToolResult) -> str:
    """The stable code of an isError tool result (its text carries ``[<code>]``)."""
    assert result.is_error, result
    match = _CODE.search(text_of(result))
    assert match is not None, text_of(result)
    return match.group(1)


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text
