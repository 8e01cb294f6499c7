"""Wire methods for the workspace's identity files (`identity/*`): AGENT.md, AGENTS.md,
USER.md and SOUL.md, read and written by the author. Refusals are
`MemoryErrorCode.IDENTITY_REFUSED`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

IdentityPath = Literal[".atrium/AGENT.md", "AGENTS.md", ".atrium/USER.md", ".atrium/SOUL.md"]
MAX_IDENTITY_BYTES = 256_000


class IdentityFileInfo(WireModel):
    """One identity file. `truncated`: the file is over `MAX_IDENTITY_BYTES` and `text` is only
    its start (cut at a character boundary; `error` says so for the author)."""

    path: IdentityPath
    exists: bool
    text: str = ""
    error: str | None = None
    truncated: bool = False


class IdentityGetParams(WireModel):
    """No fields: the files of the current workspace."""


class IdentityGetResult(WireModel):
    workspace: str
    files: tuple[IdentityFileInfo, ...]


class IdentitySetParams(WireModel):
    path: IdentityPath
    text: str = Field(max_length=MAX_IDENTITY_BYTES)


IDENTITY_GET = "identity/get"
IDENTITY_SET = "identity/set"

IDENTITY_METHODS: dict[str, MethodSpec] = {
    IDENTITY_GET: MethodSpec(
        IdentityGetParams, IdentityGetResult, "The workspace's identity files."
    ),
    IDENTITY_SET: MethodSpec(IdentitySetParams, IdentityFileInfo, "Write an identity file."),
}
