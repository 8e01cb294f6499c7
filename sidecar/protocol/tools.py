"""Wire methods on the tools the agent can use (`tool/*`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty
from sidecar.protocol.models_base import WireModel


class ToolInfo(WireModel):
    name: str = Field(description="`<server>__<tool>`, the name the model sees.")
    server: str
    tool: str
    description: str
    read_only: bool
    destructive: bool
    input_schema: dict[str, Any]


class ToolListResult(WireModel):
    tools: tuple[ToolInfo, ...]


TOOL_LIST = "tool/list"

TOOL_METHODS: dict[str, MethodSpec] = {
    TOOL_LIST: MethodSpec(Empty, ToolListResult, "Tools the agent can use."),
}
