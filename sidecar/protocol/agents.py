"""Wire methods for the strong-agent CLIs (the agents panel): which are installed, and how.

`agents/providers` asks the built-in agents server (`agent_providers`) and returns one entry per
CLI Atrium can drive: whether it was found, where, its version, and what is missing (`error`:
why it cannot run; `hint`: how to install or fix it).
"""

from __future__ import annotations

from typing import Literal

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel


class AgentsEmpty(WireModel):
    """No params."""


class AgentProviderInfo(WireModel):
    """One strong-agent CLI as found on this machine."""

    provider: str
    installed: bool
    executable: str | None = None
    source: Literal["env", "path"] | None = None
    version: str | None = None
    version_text: str | None = None
    error: str | None = None
    hint: str | None = None


class AgentProvidersResult(WireModel):
    providers: tuple[AgentProviderInfo, ...] = ()
    error: str | None = None
    """Set when the agents server could not be asked (then `providers` is empty)."""


AGENTS_PROVIDERS = "agents/providers"

AGENT_METHODS: dict[str, MethodSpec] = {
    AGENTS_PROVIDERS: MethodSpec(
        AgentsEmpty, AgentProvidersResult, "Strong-agent CLIs: found, version, what is missing."
    ),
}
