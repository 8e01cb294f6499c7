"""The seam between connections and the MCP client features (progress, logging, roots,
elicitation, sampling, list-changed): whoever builds a server's client asks these for the
callbacks to install on it."""

from __future__ import annotations

from typing import Any, Protocol


class ClientFeatures(Protocol):
    def client_kwargs(self, server: str) -> dict[str, Any]:
        """Keyword arguments for `mcp.Client(...)` of this server: `sampling_callback`,
        `elicitation_callback`, `list_roots_callback`, `logging_callback`, `message_handler`.
        A callback given here makes the client advertise the matching capability."""
        ...


class NoFeatures:
    """No optional client capabilities: tools only."""

    def client_kwargs(self, server: str) -> dict[str, Any]:
        del server
        return {}
