"""Claude Code `--output-format stream-json` parser.

Unknown types and fields are ignored (the CLI adds them often). Success is decided from the
`result` line by `is_error`, then `errors`, then the presence of `result` — never by `subtype`
alone: API errors arrive as `subtype: "success", is_error: true`, and permission denials leave a
run successful with `permission_denials` filled. A result whose `terminal_reason` says the turn
was aborted (`aborted_tools`, `aborted_streaming`: the author stopped it) is an interruption.

With `--replay-user-messages` the CLI echoes each user message the host wrote as it takes it into a
turn (`isReplay`, with the message's `uuid`): those become `message_taken` hints, and the parser
keeps their ids (`replayed`) so the controller can tell the last turn's result from one followed
by a turn for a message still waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import JsonValue

from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    MessageCompleted,
    MessageDelta,
    PermissionRequest,
    Question,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
    UsageReported,
)
from mcp_servers.agents.parsers.base import (
    JsonObject,
    ParseStep,
    StreamParser,
    dict_of,
    float_of,
    http_error_code,
    int_of,
    list_of,
    scalars_of,
    str_of,
)
from mcp_servers.agents.parsers.claude_stdin import control_error
from mcp_servers.agents.results import ErrorCode, NormalizedError, PermissionDenial

FILE_TOOLS: dict[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
"""Tools whose successful result means a file changed, and the input key holding its path."""

_ASSISTANT_ERRORS: dict[str, ErrorCode] = {
    "authentication_failed": ErrorCode.AUTH_FAILED,
    "rate_limit": ErrorCode.RATE_LIMITED,
}


class ClaudeStreamParser(StreamParser):
    """Parser for one Claude Code process's stdout."""

    provider: ClassVar = "claude"

    def __init__(self) -> None:
        super().__init__()
        self._tools: dict[str, tuple[str, JsonObject]] = {}
        self._assistant_error: str | None = None
        self.replayed: list[str | None] = []
        """The ids of the user messages the CLI echoed as taken, in order (None: no id)."""
        # Each model message's usage (its lines repeat it, growing): the run's total is the sum.
        self._usage: dict[str, tuple[int, int]] = {}
        self._handlers: dict[str, Callable[[JsonObject], ParseStep]] = {
            "system": self._system,
            "assistant": self._assistant,
            "user": self._user,
            "stream_event": self._stream_event,
            "result": self._result,
            "rate_limit_event": self._rate_limit,
            "conversation_reset": self._conversation_reset,
            "control_request": self._control_request,
            "control_cancel_request": self._control_cancel,
        }

    def on_object(self, obj: JsonObject) -> ParseStep:
        handler = self._handlers.get(str_of(obj.get("type")) or "")
        return handler(obj) if handler else ParseStep()

    def _system(self, obj: JsonObject) -> ParseStep:
        subtype = str_of(obj.get("subtype")) or "system"
        session_id = str_of(obj.get("session_id"))
        if subtype == "init" and session_id:
            tools = tuple(t for t in list_of(obj.get("tools")) if isinstance(t, str))
            started = SessionStarted(
                session_id=session_id,
                model=str_of(obj.get("model")),
                cwd=str_of(obj.get("cwd")),
                tools=tools,
            )
            return ParseStep(events=[started])
        detail = scalars_of(obj, drop=("type", "subtype", "uuid", "session_id"))
        return ParseStep(events=[StateHint(hint=subtype, detail=detail)])

    def _assistant(self, obj: JsonObject) -> ParseStep:
        message = dict_of(obj.get("message"))
        parent = str_of(obj.get("parent_tool_use_id"))
        message_id = str_of(message.get("id"))
        if self.acc.model is None:
            self.acc.model = str_of(message.get("model"))
        events: list[AgentEvent] = []
        for block in map(dict_of, list_of(message.get("content"))):
            event = self._content_block(block, message_id, parent)
            if event is not None:
                events.append(event)
        error = str_of(obj.get("error"))
        if error:
            self._assistant_error = error
            events.append(StateHint(hint="assistant_error", detail={"error": error}))
        usage = self._message_usage(message_id, dict_of(message.get("usage")))
        if usage is not None:
            events.append(usage)
        return ParseStep(events=events)

    def _message_usage(self, message_id: str | None, usage: JsonObject) -> UsageReported | None:
        """The run's totals once a model message's usage changed them (None: unchanged)."""
        if not message_id or not usage:
            return None
        seen = (int_of(usage.get("input_tokens")) or 0, int_of(usage.get("output_tokens")) or 0)
        if self._usage.get(message_id) == seen:
            return None
        self._usage[message_id] = seen
        return UsageReported(
            input_tokens=sum(used[0] for used in self._usage.values()),
            output_tokens=sum(used[1] for used in self._usage.values()),
        )

    def _content_block(
        self, block: JsonObject, message_id: str | None, parent: str | None
    ) -> AgentEvent | None:
        kind = str_of(block.get("type")) or ""
        if kind == "text":
            text = str_of(block.get("text")) or ""
            if parent is None:
                self.acc.note_text(text, message_id)
            return MessageCompleted(
                text=text, message_id=message_id, parent_call_id=parent, channel="text"
            )
        if kind == "thinking":
            thinking = str_of(block.get("thinking")) or ""
            return MessageCompleted(
                text=thinking, message_id=message_id, parent_call_id=parent, channel="thinking"
            )
        call_id = str_of(block.get("id"))
        if kind.endswith("tool_use") and call_id:
            name = str_of(block.get("name")) or kind
            tool_input = dict_of(block.get("input"))
            self._tools[call_id] = (name, tool_input)
            return ToolCall(call_id=call_id, name=name, input=tool_input, parent_call_id=parent)
        return None

    def _user(self, obj: JsonObject) -> ParseStep:
        if obj.get("isReplay") is True:
            return self._replay(obj)
        message = dict_of(obj.get("message"))
        not_executed = {
            str_of(meta.get("id")): str_of(meta.get("non_execution_kind")) or ""
            for meta in map(dict_of, list_of(obj.get("tool_result_meta")))
        }
        events: list[AgentEvent] = []
        for block in map(dict_of, list_of(message.get("content"))):
            call_id = str_of(block.get("tool_use_id"))
            if block.get("type") != "tool_result" or not call_id:
                continue
            denied = "permission" in not_executed.get(call_id, "")
            result = ToolResult(
                call_id=call_id,
                output=_tool_result_text(block.get("content")),
                is_error=block.get("is_error") is True,
                denied=denied,
            )
            events.append(result)
            if not result.is_error and not denied:
                events.extend(self._artifact(call_id, obj.get("tool_use_result")))
        return ParseStep(events=events)

    def _replay(self, obj: JsonObject) -> ParseStep:
        """The echo of a user message the host wrote: the CLI took it into a turn."""
        message_id = str_of(obj.get("uuid"))
        self.replayed.append(message_id)
        hint = StateHint(hint="message_taken", detail={"message_id": message_id})
        return ParseStep(events=[hint])

    def _artifact(self, call_id: str, tool_use_result: object) -> list[AgentEvent]:
        name, tool_input = self._tools.get(call_id, ("", {}))
        key = FILE_TOOLS.get(name)
        if key is None:
            return []
        structured = dict_of(tool_use_result)
        path = str_of(structured.get("filePath")) or str_of(tool_input.get(key))
        if not path:
            return []
        change = "added" if structured.get("type") == "create" else "modified"
        return [ArtifactCreated(path=path, change=change, call_id=call_id)]

    def _stream_event(self, obj: JsonObject) -> ParseStep:
        event = dict_of(obj.get("event"))
        if event.get("type") != "content_block_delta":
            return ParseStep()
        delta = dict_of(event.get("delta"))
        kind = delta.get("type")
        if kind == "text_delta":
            return ParseStep(events=[MessageDelta(text=str_of(delta.get("text")) or "")])
        if kind == "thinking_delta":
            text = str_of(delta.get("thinking")) or ""
            return ParseStep(events=[MessageDelta(text=text, channel="thinking")])
        return ParseStep()

    def _rate_limit(self, obj: JsonObject) -> ParseStep:
        detail = scalars_of(dict_of(obj.get("rate_limit_info")))
        return ParseStep(events=[StateHint(hint="rate_limit", detail=detail)])

    def _conversation_reset(self, obj: JsonObject) -> ParseStep:
        new_id = str_of(obj.get("new_conversation_id"))
        if new_id and not self.acc.session_frozen:
            self.acc.session_id = new_id
        hint = StateHint(hint="conversation_reset", detail={"session_id": new_id})
        return ParseStep(events=[hint])

    def _control_request(self, obj: JsonObject) -> ParseStep:
        request_id = str_of(obj.get("request_id")) or ""
        request = dict_of(obj.get("request"))
        subtype = str_of(request.get("subtype")) or ""
        if subtype != "can_use_tool":
            return ParseStep(replies=[control_error(request_id, f"unsupported: {subtype}")])
        tool_name = str_of(request.get("tool_name")) or "unknown"
        tool_input = dict_of(request.get("input"))
        questions = _questions(tool_input) if tool_name == "AskUserQuestion" else ()
        permission = PermissionRequest(
            request_id=request_id,
            tool_name=tool_name,
            input=tool_input,
            call_id=str_of(request.get("tool_use_id")),
            description=str_of(request.get("description")) or str_of(request.get("title")),
            kind="question" if tool_name == "AskUserQuestion" else "tool",
            questions=questions,
        )
        return ParseStep(events=[permission])

    def _control_cancel(self, obj: JsonObject) -> ParseStep:
        request_id = str_of(obj.get("request_id"))
        hint = StateHint(hint="permission_cancelled", detail={"request_id": request_id})
        return ParseStep(events=[hint])

    def _result(self, obj: JsonObject) -> ParseStep:
        acc = self.acc
        session_id = str_of(obj.get("session_id"))
        if session_id:
            acc.session_id = session_id
            acc.session_frozen = True
        self._read_usage(obj)
        acc.denials = [_denial(dict_of(d)) for d in list_of(obj.get("permission_denials"))]
        result_text = str_of(obj.get("result"))
        errors = [str(e) for e in list_of(obj.get("errors")) if e]
        subtype = str_of(obj.get("subtype")) or ""
        failed = (
            obj.get("is_error") is True
            or bool(errors)
            or (result_text is None and subtype.startswith("error"))
        )
        acc.final_message = result_text if result_text is not None else acc.last_text
        acc.outcome = "failed" if failed else "success"
        acc.error = self._result_error(obj, errors, result_text) if failed else None
        detail = scalars_of(obj, drop=("type", "uuid", "session_id", "result"))
        keep = ("subtype", "is_error", "terminal_reason", "stop_reason", "num_turns")
        hint = StateHint(hint="result", detail={k: v for k, v in detail.items() if k in keep})
        return ParseStep(events=[hint])

    def _read_usage(self, obj: JsonObject) -> None:
        metrics = self.acc.metrics
        usage = dict_of(obj.get("usage"))
        metrics.input_tokens = int_of(usage.get("input_tokens"))
        metrics.output_tokens = int_of(usage.get("output_tokens"))
        metrics.cache_read_tokens = int_of(usage.get("cache_read_input_tokens"))
        metrics.cache_write_tokens = int_of(usage.get("cache_creation_input_tokens"))
        metrics.cost_usd = float_of(obj.get("total_cost_usd"))
        metrics.duration_ms = int_of(obj.get("duration_ms"))
        metrics.turns = int_of(obj.get("num_turns"))

    def _result_error(
        self, obj: JsonObject, errors: list[str], result_text: str | None
    ) -> NormalizedError:
        subtype = str_of(obj.get("subtype")) or ""
        terminal = str_of(obj.get("terminal_reason"))
        status = int_of(obj.get("api_error_status"))
        if status is not None:
            code = http_error_code(status)
        elif subtype == "error_max_turns" or terminal == "max_turns":
            code = ErrorCode.MAX_TURNS
        elif subtype == "error_max_budget_usd" or terminal == "budget_exhausted":
            code = ErrorCode.BUDGET_EXCEEDED
        elif terminal is not None and terminal.startswith("aborted"):
            code = ErrorCode.INTERRUPTED
        elif self._assistant_error is not None:
            code = _ASSISTANT_ERRORS.get(self._assistant_error, ErrorCode.API_ERROR)
        else:
            code = ErrorCode.AGENT_ERROR
        if code is ErrorCode.INTERRUPTED:
            # Its `errors` are the CLI's own `[ede_diagnostic]` notes, not a reason.
            message = f"the run was interrupted (Claude Code: {terminal})"
        else:
            message = (
                "; ".join(errors) or result_text or f"Claude Code ended with {subtype or 'error'}"
            )
        keep = ("subtype", "terminal_reason", "api_error_status", "stop_reason")
        detail: dict[str, JsonValue] = {
            k: v for k, v in scalars_of(obj).items() if k in keep and v is not None
        }
        return NormalizedError(code=code, message=message, detail=detail)


def _tool_result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = [str_of(dict_of(block).get("text")) for block in list_of(content)]
    return "\n".join(p for p in parts if p)


def _denial(denial: JsonObject) -> PermissionDenial:
    return PermissionDenial(
        tool_name=str_of(denial.get("tool_name")) or "unknown",
        call_id=str_of(denial.get("tool_use_id")),
        input=dict_of(denial.get("tool_input")),
    )


def _questions(tool_input: JsonObject) -> tuple[Question, ...]:
    questions: list[Question] = []
    for raw in map(dict_of, list_of(tool_input.get("questions"))):
        text = str_of(raw.get("question"))
        if not text:
            continue
        labels = [str_of(dict_of(o).get("label")) for o in list_of(raw.get("options"))]
        questions.append(
            Question(
                question=text,
                header=str_of(raw.get("header")),
                options=tuple(label for label in labels if label),
                multi_select=raw.get("multiSelect") is True,
            )
        )
    return tuple(questions)
