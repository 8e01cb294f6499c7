"""The planner's view of the conversation: a plain message of the context is converted once and
reused on every later step and turn; an entry with tool calls keeps them."""

from __future__ import annotations

from sidecar.graph.nodes.planner import to_chat_turn
from sidecar.llm.types import ChatTurn, ToolCallRequest
from sidecar.turn.state import ChatEntry


def test_a_plain_message_is_converted_once_and_reused() -> None:
    earlier: ChatEntry = {"role": "user", "content": "What do my notes say?"}
    again: ChatEntry = {"role": "user", "content": "What do my notes say?"}  # read again

    first = to_chat_turn(earlier)

    assert first == ChatTurn("user", "What do my notes say?")
    assert to_chat_turn(again) is first


def test_an_entry_with_tool_calls_keeps_them() -> None:
    call: ChatEntry = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "name": "workspace__read", "arguments": {"path": "a"}}],
    }
    result: ChatEntry = {"role": "tool", "content": "text", "tool_call_id": "c1", "name": "r"}

    assert to_chat_turn(call).tool_calls == (
        ToolCallRequest(id="c1", name="workspace__read", arguments={"path": "a"}),
    )
    assert to_chat_turn(result) == ChatTurn("tool", "text", tool_call_id="c1", name="r")
