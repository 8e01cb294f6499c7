"""The pure parser contract: raw stdout lines in, normalized events and protocol replies out.

A parser does no I/O. The process layer feeds it every stdout line; it returns the events to
emit and any messages the host must write back to the CLI (`replies`), and it accumulates what
the final `OperatorResult` needs in a `RunAccumulator`. Replay and tests use parsers directly.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, cast

from pydantic import JsonValue

from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    MessageCompleted,
    MessageDelta,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.results import (
    Artifact,
    ErrorCode,
    NormalizedError,
    PermissionDenial,
    Provider,
    RunMetrics,
)

JsonObject = dict[str, Any]


@dataclass
class ParseStep:
    """What one stdout line produced: upward events and messages to write to the CLI's stdin."""

    events: list[AgentEvent] = field(default_factory=list[AgentEvent])
    replies: list[dict[str, JsonValue]] = field(default_factory=list[dict[str, JsonValue]])


@dataclass
class MetricsAccumulator:
    """Mutable mirror of `RunMetrics`, filled as usage lines arrive."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    turns: int | None = None

    def to_model(self, *, tool_calls: int, measured_duration_ms: int | None) -> RunMetrics:
        """Freeze into `RunMetrics`; a CLI-reported duration wins over the measured one."""
        duration = self.duration_ms if self.duration_ms is not None else measured_duration_ms
        return RunMetrics(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens,
            cost_usd=self.cost_usd,
            duration_ms=duration,
            turns=self.turns,
            tool_calls=tool_calls,
        )


@dataclass
class RunAccumulator:
    """Everything a parser learned that the final result needs."""

    session_id: str | None = None
    session_frozen: bool = False
    session_announced: bool = False
    model: str | None = None
    outcome: Literal["success", "failed"] | None = None
    error: NormalizedError | None = None
    pending_error: NormalizedError | None = None
    final_message: str | None = None
    last_text: str | None = None
    last_text_id: str | None = None
    output_seen: bool = False
    artifacts: dict[str, Artifact] = field(default_factory=dict[str, Artifact])
    tool_call_ids: set[str] = field(default_factory=set[str])
    reported_tool_calls: int | None = None
    denials: list[PermissionDenial] = field(default_factory=list[PermissionDenial])
    metrics: MetricsAccumulator = field(default_factory=MetricsAccumulator)
    non_json_lines: int = 0

    def note_text(self, text: str, message_id: str | None) -> None:
        """Remember the latest top-level assistant text (the fallback final message)."""
        if message_id is not None and message_id == self.last_text_id and self.last_text:
            self.last_text = f"{self.last_text}\n{text}"
        else:
            self.last_text = text
        self.last_text_id = message_id

    def observe(self, event: AgentEvent) -> None:
        """Fold an emitted event into the run state (sessions, output, tools, artifacts)."""
        if isinstance(event, SessionStarted):
            self.session_announced = True
            if not self.session_frozen:
                self.session_id = event.session_id
                self.model = event.model or self.model
        elif isinstance(event, MessageCompleted | MessageDelta | ToolResult):
            self.output_seen = True
        elif isinstance(event, ToolCall):
            self.output_seen = True
            self.tool_call_ids.add(event.call_id)
        elif isinstance(event, ArtifactCreated):
            self.artifacts[event.path] = Artifact(path=event.path, change=event.change)


class StreamParser(ABC):
    """Turns one provider's stdout lines into normalized events; subclasses per provider."""

    provider: ClassVar[Provider]

    def __init__(self) -> None:
        self.acc = RunAccumulator()

    def feed(self, line: str) -> ParseStep:
        """Parse one stdout line. Blank and non-JSON lines produce nothing (raw trace only)."""
        obj = decode_json_line(line)
        if obj is None:
            if line.strip():
                self.acc.non_json_lines += 1
            return ParseStep()
        step = self.on_object(obj)
        for event in step.events:
            self.acc.observe(event)
        return step

    def finish(self) -> list[AgentEvent]:
        """Called once at end of stdout; parsers of whole-document outputs emit here."""
        return []

    @abstractmethod
    def on_object(self, obj: JsonObject) -> ParseStep:
        """Translate one decoded JSON object."""


def decode_json_line(line: str) -> JsonObject | None:
    """The JSON object on this line, or None for blank, non-JSON or non-object lines."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    return as_object(value)


def as_object(value: object) -> JsonObject | None:
    """`value` as a JSON object (string keys), or None if it is not a dict."""
    if not isinstance(value, dict):
        return None
    mapping = cast(dict[object, Any], value)
    return {str(k): v for k, v in mapping.items()}


def dict_of(value: object) -> JsonObject:
    """`value` as a JSON object, or an empty one if it is not a dict."""
    obj = as_object(value)
    return obj if obj is not None else {}


def list_of(value: object) -> list[Any]:
    """`value` as a list, or an empty one."""
    if isinstance(value, list):
        return list(cast(list[Any], value))
    return []


def str_of(value: object) -> str | None:
    """`value` if it is a string."""
    return value if isinstance(value, str) else None


def int_of(value: object) -> int | None:
    """`value` if it is an integer (bools excluded)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def float_of(value: object) -> float | None:
    """`value` as a float if it is a number (bools excluded)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def scalars_of(obj: JsonObject, *, drop: tuple[str, ...] = ()) -> dict[str, JsonValue]:
    """The scalar (str/int/float/bool/None) fields of `obj`, minus `drop` (for state hints)."""
    out: dict[str, JsonValue] = {}
    for key, value in obj.items():
        if key in drop:
            continue
        if value is None or isinstance(value, str | int | float | bool):
            out[key] = value
    return out


def http_error_code(status: int) -> ErrorCode:
    """The normalized code for an HTTP status reported by a CLI's model API."""
    if status in (401, 403):
        return ErrorCode.AUTH_FAILED
    if status == 429:
        return ErrorCode.RATE_LIMITED
    return ErrorCode.API_ERROR
