"""What the host tells the graph about tools and call outcomes (no MCP types leak out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidecar.binding.deadline import ProgressSink

__all__ = ["SEPARATOR", "HostTool", "ProgressSink", "ToolOutcome", "UnknownToolError", "split_name"]


SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class HostTool:
    """A tool of a connected server, named `<server>__<tool>` for the model."""

    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    trusted: bool

    @property
    def name(self) -> str:
        return f"{self.server}{SEPARATOR}{self.tool}"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A call's result as text for the model, plus structured content when the server gave it."""

    is_error: bool
    text: str
    structured: dict[str, Any] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        return {"is_error": self.is_error, "text": self.text, "structured": self.structured}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolOutcome:
        return cls(bool(data["is_error"]), str(data["text"]), data.get("structured"))


class UnknownToolError(LookupError):
    """No connected server offers a tool of this name."""


def split_name(name: str) -> tuple[str, str]:
    """`workspace__write` → ("workspace", "write").

    Raises:
        UnknownToolError: the name has no server part.
    """
    server, sep, tool = name.partition(SEPARATOR)
    if not sep or not server or not tool:
        raise UnknownToolError(f"{name!r} is not of the form <server>__<tool>")
    return server, tool
