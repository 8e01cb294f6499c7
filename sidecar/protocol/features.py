"""Wire methods for MCP client features: server logs, resources, prompts, roots (issue 4).

Every method names its server by the name in the server list (the `<server>` of
`<server>__<tool>`). Failures are `FeatureErrorCode`s: a server that is not connected answers
`SERVER_UNAVAILABLE`; a refusal by the server itself (unknown URI, bad prompt arguments) answers
`SERVER_REFUSED` with the server's message.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel


class FeatureErrorCode(IntEnum):
    """Application error codes of the feature methods (-32030..-32039 of the server range)."""

    SERVER_UNAVAILABLE = -32030
    SERVER_REFUSED = -32031
    FEATURE_UNSUPPORTED = -32032


LogLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]


class ServerLogListParams(WireModel):
    server: str
    min_level: LogLevel = "debug"
    after_seq: int = Field(default=-1, description="Only entries with a larger `seq` (paging).")
    limit: int = Field(default=500, ge=1, le=5000)


class ServerLogEntry(WireModel):
    """One log notification from a server (`source="server"`) or a note the host made about
    the server's protocol traffic (`source="host"`: list changes, resource updates)."""

    seq: int
    time: float
    level: LogLevel
    logger: str | None = None
    text: str
    source: Literal["server", "host"] = "server"


class ServerLogListResult(WireModel):
    server: str
    level: LogLevel | None = Field(description="The level asked of the server; None: not set.")
    entries: tuple[ServerLogEntry, ...]
    dropped: int = Field(description="Older entries no longer kept (the buffer is bounded).")


class ServerLogSetLevelParams(WireModel):
    server: str
    level: LogLevel


class ServerLogSetLevelResult(WireModel):
    server: str
    level: LogLevel
    applied: Literal["now", "next_connection"] = Field(
        description=(
            "`now`: sent as `logging/setLevel` (2025-era servers); `next_connection`: remembered "
            "and opted into per request once the server reconnects (2026-07-28 servers), or "
            "the server is not connected."
        )
    )


class ResourceListParams(WireModel):
    server: str | None = Field(default=None, description="One server; None: every connected one.")


class ResourceInfo(WireModel):
    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class ResourceTemplateInfo(WireModel):
    server: str
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


class ResourceListResult(WireModel):
    resources: tuple[ResourceInfo, ...]
    templates: tuple[ResourceTemplateInfo, ...] = ()


class ResourceRef(WireModel):
    server: str
    uri: str


class ResourceContent(WireModel):
    """One part of a resource: `text` for text parts; binary parts carry only their size."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob_bytes: int | None = None


class ResourceReadResult(WireModel):
    server: str
    uri: str
    contents: tuple[ResourceContent, ...]


class ResourceAttachResult(WireModel):
    """A resource as a block of text to put into a message (`run/start` text): the author's
    explicit choice of context. Binary parts are named, not inlined."""

    server: str
    uri: str
    text: str
    truncated: bool = False


class ResourceSubscribeParams(WireModel):
    server: str
    uri: str
    subscribe: bool = True


class PromptListParams(WireModel):
    server: str | None = Field(default=None, description="One server; None: every connected one.")


class PromptArgumentInfo(WireModel):
    name: str
    description: str | None = None
    required: bool = False


class PromptInfo(WireModel):
    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgumentInfo, ...] = ()
    command: str = Field(description="The slash command the composer offers: `/<server>:<name>`.")


class PromptListResult(WireModel):
    prompts: tuple[PromptInfo, ...]


class PromptGetParams(WireModel):
    server: str
    name: str
    arguments: dict[str, str] = Field(default_factory=dict[str, str])


class PromptMessageInfo(WireModel):
    role: Literal["user", "assistant"]
    text: str


class PromptGetResult(WireModel):
    """The expanded prompt. `text` is what the composer sends: the user messages joined (a
    prompt with assistant turns keeps them in `messages` for display)."""

    server: str
    name: str
    description: str | None = None
    messages: tuple[PromptMessageInfo, ...]
    text: str


class FeaturesEmpty(WireModel):
    """A result with no fields."""


SERVER_LOG_LIST = "server_log/list"
SERVER_LOG_SET_LEVEL = "server_log/set_level"
RESOURCE_LIST = "resource/list"
RESOURCE_READ = "resource/read"
RESOURCE_ATTACH = "resource/attach"
RESOURCE_SUBSCRIBE = "resource/subscribe"
PROMPT_LIST = "prompt/list"
PROMPT_GET = "prompt/get"

FEATURE_METHODS: dict[str, MethodSpec] = {
    SERVER_LOG_LIST: MethodSpec(
        ServerLogListParams, ServerLogListResult, "A server's recent log notifications."
    ),
    SERVER_LOG_SET_LEVEL: MethodSpec(
        ServerLogSetLevelParams, ServerLogSetLevelResult, "Set the log level asked of a server."
    ),
    RESOURCE_LIST: MethodSpec(
        ResourceListParams, ResourceListResult, "Resources and templates of connected servers."
    ),
    RESOURCE_READ: MethodSpec(ResourceRef, ResourceReadResult, "Read one resource."),
    RESOURCE_ATTACH: MethodSpec(
        ResourceRef, ResourceAttachResult, "A resource as text to include in a message."
    ),
    RESOURCE_SUBSCRIBE: MethodSpec(
        ResourceSubscribeParams, FeaturesEmpty, "Follow (or stop following) a resource's updates."
    ),
    PROMPT_LIST: MethodSpec(PromptListParams, PromptListResult, "Prompts of connected servers."),
    PROMPT_GET: MethodSpec(PromptGetParams, PromptGetResult, "Expand a prompt with arguments."),
}
