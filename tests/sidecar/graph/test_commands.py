"""Direct commands: parsed without a model, with a usage message for every mistake."""

from __future__ import annotations

import pytest

from sidecar.graph.commands import (
    CallCommand,
    CommandError,
    CompactCommand,
    ToolsCommand,
    is_command,
    is_compact,
    parse_command,
)


def test_tools_and_call_commands_parse():
    assert parse_command("/tools") == ToolsCommand()
    assert parse_command('/call workspace__read {"path": "a.md"}') == CallCommand(
        "workspace__read", {"path": "a.md"}
    )
    assert parse_command("/call workspace__list") == CallCommand("workspace__list", {})
    assert parse_command(r'/call x__y {"s": "\ud83d\ude00"}') == CallCommand(
        "x__y", {"s": "\U0001f600"}
    )


@pytest.mark.parametrize(
    "text",
    [
        "/nope",
        "/call",
        '/call x__y {"a": ',
        "/call x__y [1, 2]",
        '/call x__y "text"',
        "/compact everything",
        "/tools please",
        r'/call x__y {"path": "\ud800"}',
        r'/call x__y {"a": ["ok", {"b": "z\udfff"}]}',
        r'/call x__y {"\udc00": 1}',
    ],
)
def test_malformed_commands_raise_a_command_error(text: str):
    with pytest.raises(CommandError):
        parse_command(text)


def test_only_text_starting_with_a_slash_is_a_command():
    assert is_command("  /tools") and not is_command("tools please")


def test_compact_parses_and_is_known_before_the_graph_runs():
    assert parse_command(" /compact ") == CompactCommand()
    assert is_compact("/compact") and not is_compact("/compact now") and not is_compact("/tools")
