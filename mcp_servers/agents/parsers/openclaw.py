"""OpenClaw `openclaw agent ... --json` parser.

The CLI prints one pretty-printed JSON document at the end, possibly after plugin log lines:
gateway mode `{runId, status, summary?, result: {payloads, meta}}`, `--local` the bare
`{payloads, meta}`. Nothing streams, so every event is produced by `finish()`.
"""

from __future__ import annotations

import json
from typing import ClassVar

from pydantic import JsonValue

from mcp_servers.agents.events import AgentEvent, MessageCompleted, SessionStarted, StateHint
from mcp_servers.agents.parsers.base import (
    JsonObject,
    ParseStep,
    StreamParser,
    as_object,
    dict_of,
    int_of,
    list_of,
    str_of,
)
from mcp_servers.agents.results import ErrorCode, NormalizedError


class OpenClawOutputParser(StreamParser):
    """Collects stdout and normalizes the final JSON document."""

    provider: ClassVar = "openclaw"

    def __init__(self, session_hint: str | None = None) -> None:
        super().__init__()
        self._lines: list[str] = []
        self._session_hint = session_hint

    def feed(self, line: str) -> ParseStep:
        self._lines.append(line)
        return ParseStep()

    def on_object(self, obj: JsonObject) -> ParseStep:
        return ParseStep()

    def finish(self) -> list[AgentEvent]:
        located = locate_document(self._lines)
        before = self._lines if located is None else self._lines[: located[0]]
        self.acc.non_json_lines = len([line for line in before if line.strip()])
        if located is None:
            return []
        events = self._normalize(located[1])
        for event in events:
            self.acc.observe(event)
        return events

    def _normalize(self, document: JsonObject) -> list[AgentEvent]:
        result = dict_of(document.get("result")) if "result" in document else document
        meta = dict_of(result.get("meta"))
        agent_meta = dict_of(meta.get("agentMeta"))
        events: list[AgentEvent] = []
        session_id = str_of(agent_meta.get("sessionId")) or self._session_hint
        if session_id:
            model = str_of(agent_meta.get("model"))
            events.append(SessionStarted(session_id=session_id, model=model))
        texts: list[str] = []
        for payload in map(dict_of, list_of(result.get("payloads"))):
            text = str_of(payload.get("text"))
            if text:
                texts.append(text)
                events.append(MessageCompleted(text=text))
        self._read_metrics(meta, agent_meta)
        self.acc.final_message = "\n\n".join(texts) if texts else None
        run_id = str_of(document.get("runId"))
        status = str_of(document.get("status"))
        events.append(StateHint(hint="result", detail={"status": status, "run_id": run_id}))
        self._decide(document, status, meta)
        return events

    def _read_metrics(self, meta: JsonObject, agent_meta: JsonObject) -> None:
        usage = dict_of(agent_meta.get("usage"))
        metrics = self.acc.metrics
        metrics.input_tokens = int_of(usage.get("input"))
        metrics.output_tokens = int_of(usage.get("output"))
        metrics.cache_read_tokens = int_of(usage.get("cacheRead"))
        metrics.cache_write_tokens = int_of(usage.get("cacheWrite"))
        metrics.duration_ms = int_of(meta.get("durationMs"))
        metrics.turns = 1

    def _decide(self, document: JsonObject, status: str | None, meta: JsonObject) -> None:
        meta_error = dict_of(meta.get("error"))
        if status in (None, "ok") and not meta_error and meta.get("aborted") is not True:
            self.acc.outcome = "success"
            return
        message = (
            str_of(meta_error.get("message"))
            or str_of(document.get("summary"))
            or f"OpenClaw run ended with status {status or 'aborted'}"
        )
        code = ErrorCode.TIMEOUT if status == "timeout" else ErrorCode.AGENT_ERROR
        detail: dict[str, JsonValue] = {"status": status, "aborted": meta.get("aborted") is True}
        self.acc.outcome = "failed"
        self.acc.error = NormalizedError(code=code, message=message, detail=detail)


def locate_document(lines: list[str]) -> tuple[int, JsonObject] | None:
    """The first line index from which the rest of the output is one JSON object, and it."""
    for index, line in enumerate(lines):
        if not line.startswith("{"):
            continue
        try:
            value: object = json.loads("\n".join(lines[index:]))
        except ValueError:
            continue
        obj = as_object(value)
        if obj is not None:
            return index, obj
    return None
