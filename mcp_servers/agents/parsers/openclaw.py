"""OpenClaw `openclaw agent ... --json` parser.

The CLI prints one pretty-printed JSON document at the end, possibly after plugin log lines:
gateway mode `{runId, status, summary?, result: {payloads, meta}}`, `--local` the bare
`{payloads, meta}`. Every failure it reports itself is the envelope
`{"ok": false, "error": {"type", "message"}}` with exit 1 (bad key, unreachable model, no Gateway
credentials, ...): its message is kept and classified into a normalized code. A turn that ran past
`--timeout` is a success-shaped document with `meta.error.kind = "incomplete_turn"`; it is a
timeout. `meta.toolSummary.calls` is the tool-call count. Nothing streams on stdout, so events come
from `finish()`: the session, then the run's transcript rows (tool calls, results, messages; see
`openclaw_transcript`) when the controller read them, else the document's payload texts.
"""

from __future__ import annotations

import json
import re
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
from mcp_servers.agents.parsers.openclaw_transcript import TranscriptRow, transcript_events
from mcp_servers.agents.results import ErrorCode, NormalizedError

# Message fragments of OpenClaw's error envelope, most specific first.
_ERROR_KINDS: tuple[tuple[ErrorCode, re.Pattern[str]], ...] = (
    (
        ErrorCode.AUTH_FAILED,
        re.compile(r"authenticat|unauthori[sz]ed|http 40[13]\b|invalid api key|api key", re.I),
    ),
    (
        ErrorCode.RATE_LIMITED,
        re.compile(r"cooldown|rate.?limit|http 429\b|too many requests", re.I),
    ),
    (
        ErrorCode.CONFIGURATION,
        re.compile(
            r"requires credentials|gateway|config|not configured|unknown model|no model|"
            r"state (folder|dir)|lock",
            re.I,
        ),
    ),
    (
        ErrorCode.MODEL_UNREACHABLE,
        re.compile(
            r"econnrefused|enotfound|ehostunreach|fetch failed|connection (error|refused)|"
            r"network|unreachable|socket hang up|timed? ?out",
            re.I,
        ),
    ),
)


def classify_error(message: str) -> ErrorCode:
    """The normalized code for an OpenClaw error message (agent_error when none fits)."""
    for code, pattern in _ERROR_KINDS:
        if pattern.search(message):
            return code
    return ErrorCode.AGENT_ERROR


class OpenClawOutputParser(StreamParser):
    """Collects stdout and normalizes the final JSON document (plus transcript rows)."""

    provider: ClassVar = "openclaw"

    def __init__(self, session_hint: str | None = None, workspace: str | None = None) -> None:
        super().__init__()
        self._lines: list[str] = []
        self._session_hint = session_hint
        self._workspace = workspace
        self._rows: list[TranscriptRow] = []
        self.streamed = False
        """Set by the controller once it emitted transcript steps live (while the CLI ran)."""

    def feed(self, line: str) -> ParseStep:
        self._lines.append(line)
        return ParseStep()

    def on_object(self, obj: JsonObject) -> ParseStep:
        return ParseStep()

    def add_transcript(self, rows: list[TranscriptRow]) -> None:
        """The run's transcript rows not yet emitted, read by the controller after the CLI ended."""
        self._rows.extend(rows)

    def finish(self) -> list[AgentEvent]:
        located = locate_document(self._lines)
        before = self._lines if located is None else self._lines[: located[0]]
        self.acc.non_json_lines = len([line for line in before if line.strip()])
        events = self._steps() if located is None else self._normalize(located[1])
        for event in events:
            self.acc.observe(event)
        return events

    def _steps(self) -> list[AgentEvent]:
        """The events of the transcript rows handed over (those not already streamed live)."""
        return transcript_events(self._rows, self._workspace)

    def _normalize(self, document: JsonObject) -> list[AgentEvent]:
        if document.get("ok") is False:
            return self._envelope(dict_of(document.get("error")))
        result = dict_of(document.get("result")) if "result" in document else document
        meta = dict_of(result.get("meta"))
        agent_meta = dict_of(meta.get("agentMeta"))
        events: list[AgentEvent] = []
        session_id = str_of(agent_meta.get("sessionId")) or self._session_hint
        if session_id:
            model = str_of(agent_meta.get("model"))
            events.append(SessionStarted(session_id=session_id, model=model))
        steps = self._steps()
        texts: list[str] = []
        for payload in map(dict_of, list_of(result.get("payloads"))):
            text = str_of(payload.get("text"))
            if text and payload.get("isError") is not True:
                texts.append(text)
                if not self._rows and not self.streamed:
                    steps.append(MessageCompleted(text=text))
        events.extend(steps)
        self._read_metrics(meta, agent_meta)
        self.acc.final_message = "\n\n".join(texts) if texts else None
        run_id = str_of(document.get("runId"))
        status = str_of(document.get("status"))
        events.append(StateHint(hint="result", detail={"status": status, "run_id": run_id}))
        self._decide(document, status, meta, result)
        return events

    def _envelope(self, error: JsonObject) -> list[AgentEvent]:
        message = str_of(error.get("message")) or "OpenClaw reported an error without a message"
        first_line = message.strip().splitlines()[0] if message.strip() else message
        detail: dict[str, JsonValue] = {"type": str_of(error.get("type")), "message": message}
        self.acc.outcome = "failed"
        self.acc.error = NormalizedError(
            code=classify_error(message), message=first_line, detail=detail
        )
        return self._steps()

    def _read_metrics(self, meta: JsonObject, agent_meta: JsonObject) -> None:
        usage = dict_of(agent_meta.get("usage"))
        metrics = self.acc.metrics
        metrics.input_tokens = int_of(usage.get("input"))
        metrics.output_tokens = int_of(usage.get("output"))
        metrics.cache_read_tokens = int_of(usage.get("cacheRead"))
        metrics.cache_write_tokens = int_of(usage.get("cacheWrite"))
        metrics.duration_ms = int_of(meta.get("durationMs"))
        metrics.turns = int_of(agent_meta.get("assistantTurns")) or 1
        calls = int_of(dict_of(meta.get("toolSummary")).get("calls"))
        if calls is not None:
            self.acc.reported_tool_calls = calls

    def _decide(
        self, document: JsonObject, status: str | None, meta: JsonObject, result: JsonObject
    ) -> None:
        meta_error = dict_of(meta.get("error"))
        if status in (None, "ok") and not meta_error and meta.get("aborted") is not True:
            self.acc.outcome = "success"
            return
        kind = str_of(meta_error.get("kind"))
        payload_error = next(
            (
                str_of(p.get("text"))
                for p in map(dict_of, list_of(result.get("payloads")))
                if p.get("isError") is True
            ),
            None,
        )
        message = (
            str_of(meta_error.get("message"))
            or payload_error
            or str_of(document.get("summary"))
            or f"OpenClaw run ended with status {status or 'aborted'}"
        )
        timed_out = status == "timeout" or kind == "incomplete_turn"
        code = ErrorCode.TIMEOUT if timed_out else ErrorCode.AGENT_ERROR
        detail: dict[str, JsonValue] = {
            "status": status,
            "aborted": meta.get("aborted") is True,
            "kind": kind,
        }
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
