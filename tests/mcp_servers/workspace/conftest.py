"""A workspace root next to an 'outside' directory, plus helpers for tool results."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp.types import CallToolResult, TextContent

_CODE = re.compile(r"\[([a-z_]+)\]")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace that nothing may reach."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    """The workspace root: a small tree with one text file."""
    path = tmp_path / "ws"
    (path / "sub").mkdir(parents=True)
    (path / "sub" / "a.txt").write_text("alpha\nbeta\ngamma\n")
    return path


def error_code(result: CallToolResult) -> str:
    """The stable code of an isError tool result (its text carries ``[<code>]``)."""
    assert result.is_error, result
    text = text_of(result)
    match = _CODE.search(text)
    assert match is not None, text
    return match.group(1)


def text_of(result: CallToolResult) -> str:
    """The text of a result's single text block."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text
