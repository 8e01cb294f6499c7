"""The built-in sandbox MCP server: run Python in a child process the OS confines."""

from .errors import DiskQuotaExceededError, SandboxError, SandboxUnavailableError
from .models import Isolation, RunResult
from .runner import SandboxSettings
from .server import build_server

__all__ = [
    "DiskQuotaExceededError",
    "Isolation",
    "RunResult",
    "SandboxError",
    "SandboxSettings",
    "SandboxUnavailableError",
    "build_server",
]
