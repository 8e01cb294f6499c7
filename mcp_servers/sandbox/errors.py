"""Typed refusals of the sandbox: a run that cannot be confined, a run that wrote too much.

Each is a ``ToolError`` whose text starts with ``[<code>]``, so a client (the model, the skills
server that shares the runner) gets the reason as a tool error, and a caller can catch the class.
"""

from __future__ import annotations

from typing import ClassVar

from mcp.server.mcpserver.exceptions import ToolError


class SandboxError(ToolError):
    """A run refused or stopped by the sandbox; ``code`` names the kind."""

    code: ClassVar[str] = "sandbox_error"

    def __init__(self, detail: str) -> None:
        super().__init__(f"[{self.code}] {detail}")
        self.detail = detail


class SandboxUnavailableError(SandboxError):
    """No OS-level confinement works here, and the weaker guard-only mode was not allowed."""

    code: ClassVar[str] = "sandbox_unavailable"


class DiskQuotaExceededError(SandboxError):
    """The run wrote more bytes (or files) in its folder than the per-run quota allows.

    The run was stopped and its folder removed; nothing outside the folder was touched.
    """

    code: ClassVar[str] = "disk_quota_exceeded"

    def __init__(self, *, used_bytes: int, quota_bytes: int, files: int, max_files: int) -> None:
        self.used_bytes = used_bytes
        self.quota_bytes = quota_bytes
        self.files = files
        self.max_files = max_files
        super().__init__(
            f"the run wrote {used_bytes // 1024} KiB in {files} files and folders, over its quota "
            f"of {quota_bytes // 1024} KiB and {max_files} files; it was stopped and its run "
            "folder removed"
        )
