"""The messages written to Claude Code's stdin have the SDK's exact shapes."""

from __future__ import annotations

import pytest

from mcp_servers.agents.errors import InvalidDecisionError
from mcp_servers.agents.events import PermissionRequest, Question
from mcp_servers.agents.parsers.claude_stdin import (
    interrupt_request,
    permission_response,
    user_message,
)
from mcp_servers.agents.requests import AllowTool, AnswerQuestion, DenyTool

WRITE = PermissionRequest(
    request_id="req-1", tool_name="Write", input={"file_path": "/w/a.txt", "content": "hi"}
)
QUESTION = PermissionRequest(
    request_id="req-2",
    tool_name="AskUserQuestion",
    input={"questions": [{"question": "Which?", "options": [{"label": "a"}]}]},
    kind="question",
    questions=(Question(question="Which?", options=("a",)),),
)


def test_allow_without_edits_echoes_the_original_input() -> None:
    assert permission_response(WRITE, AllowTool()) == {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": "req-1",
            "response": {
                "behavior": "allow",
                "updatedInput": {"file_path": "/w/a.txt", "content": "hi"},
            },
        },
    }


def test_allow_with_edited_input_sends_the_edit() -> None:
    edited = {"file_path": "/w/a.txt", "content": "edited"}

    message = permission_response(WRITE, AllowTool(updated_input=edited))

    assert message["response"] == {
        "subtype": "success",
        "request_id": "req-1",
        "response": {"behavior": "allow", "updatedInput": edited},
    }


def test_deny_carries_the_message_and_optional_interrupt() -> None:
    plain = permission_response(WRITE, DenyTool(message="not now"))
    stopping = permission_response(WRITE, DenyTool(message="stop", interrupt=True))

    assert plain["response"] == {
        "subtype": "success",
        "request_id": "req-1",
        "response": {"behavior": "deny", "message": "not now"},
    }
    response = stopping["response"]
    assert isinstance(response, dict)
    assert response["response"] == {"behavior": "deny", "message": "stop", "interrupt": True}


def test_answers_are_added_to_the_original_question_input() -> None:
    message = permission_response(QUESTION, AnswerQuestion(answers={"Which?": "a"}))

    response = message["response"]
    assert isinstance(response, dict)
    assert response["response"] == {
        "behavior": "allow",
        "updatedInput": {
            "questions": [{"question": "Which?", "options": [{"label": "a"}]}],
            "answers": {"Which?": "a"},
        },
    }


def test_answers_for_a_plain_tool_request_are_refused() -> None:
    with pytest.raises(InvalidDecisionError):
        permission_response(WRITE, AnswerQuestion(answers={"x": "y"}))


def test_user_message_and_interrupt_shapes() -> None:
    assert user_message("do it") == {
        "type": "user",
        "message": {"role": "user", "content": "do it"},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    with_image = user_message("look", [("image/png", "AAAA")])
    message = with_image["message"]
    assert isinstance(message, dict)
    assert message["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "text", "text": "look"},
    ]
    assert interrupt_request("i1") == {
        "type": "control_request",
        "request_id": "i1",
        "request": {"subtype": "interrupt"},
    }
