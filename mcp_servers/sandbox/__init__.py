"""The built-in sandbox MCP server: run Python in a confined child process."""

from .models import Isolation, RunResult
from .runner import SandboxSettings
from .server import build_server

__all__ = ["Isolation", "RunResult", "SandboxSettings", "build_server"]
