"""The fields every interrupt shares, whatever its kind (kinds live beside their features)."""

from __future__ import annotations

from pydantic import Field

from sidecar.protocol.models_base import WireModel


class InterruptBase(WireModel):
    id: str
    title: str
    body: str
    run_id: str | None = None
    task_id: str | None = Field(
        default=None, description="Raised inside this subagent task (None: the main agent)."
    )
    live: bool = Field(
        default=False,
        description=(
            "Raised by an MCP server while one of the run's tool calls is in flight: the run "
            "keeps running, the answer goes straight to the waiting call, and the interrupt is "
            "dropped if the call ends first."
        ),
    )
