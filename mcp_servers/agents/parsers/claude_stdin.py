"""Messages the host writes to Claude Code's stdin in stream-json input mode (pure builders).

Shapes follow the official Python SDK (client.py, query.py): one JSON object per line.
"""

from __future__ import annotations

import uuid

from pydantic import JsonValue

from mcp_servers.agents.errors import InvalidDecisionError
from mcp_servers.agents.events import PermissionRequest
from mcp_servers.agents.requests import AllowTool, AnswerQuestion, DenyTool, PermissionDecision


def new_message_id() -> str:
    """A fresh id for a user message (the CLI echoes it back as the `uuid` of its replay)."""
    return str(uuid.uuid4())


def user_message(
    text: str, images: list[tuple[str, str]] | None = None, *, message_id: str | None = None
) -> dict[str, JsonValue]:
    """A user message (the prompt, or one sent mid-run); `images` are (media type, base64 data)
    pairs sent as image blocks, `message_id` its `uuid` (the SDK's optional field)."""
    content: JsonValue
    if images:
        blocks: list[JsonValue] = [
            {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
            for mime, data in images
        ]
        blocks.append({"type": "text", "text": text})
        content = blocks
    else:
        content = text
    message: dict[str, JsonValue] = {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    if message_id is not None:
        message["uuid"] = message_id
    return message


def interrupt_request(request_id: str) -> dict[str, JsonValue]:
    """Ask the CLI to stop the running turn (it answers and ends the turn with a result)."""
    request: dict[str, JsonValue] = {"subtype": "interrupt"}
    return {"type": "control_request", "request_id": request_id, "request": request}


def control_error(request_id: str, message: str) -> dict[str, JsonValue]:
    """Refuse a control request the host does not implement, so the CLI does not wait."""
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": message},
    }


def permission_response(
    request: PermissionRequest, decision: PermissionDecision
) -> dict[str, JsonValue]:
    """The `control_response` answering a `can_use_tool` request.

    Allow always carries `updatedInput` (the original input when not edited: the CLI runs the
    tool with whatever it receives). Answers to AskUserQuestion are an allow whose input is the
    original plus `answers`.

    Raises:
        InvalidDecisionError: answers were given for a request that is not a question.
    """
    inner: dict[str, JsonValue]
    if isinstance(decision, AllowTool):
        updated = decision.updated_input if decision.updated_input is not None else request.input
        inner = {"behavior": "allow", "updatedInput": dict(updated)}
    elif isinstance(decision, AnswerQuestion):
        if request.kind != "question":
            raise InvalidDecisionError(f"{request.tool_name} is not a question; allow or deny it")
        answers: dict[str, JsonValue] = dict(decision.answers)
        inner = {"behavior": "allow", "updatedInput": {**request.input, "answers": answers}}
    else:
        inner = _deny(decision)
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request.request_id, "response": inner},
    }


def _deny(decision: DenyTool) -> dict[str, JsonValue]:
    inner: dict[str, JsonValue] = {"behavior": "deny", "message": decision.message}
    if decision.interrupt:
        inner["interrupt"] = True
    return inner
