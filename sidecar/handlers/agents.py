"""agents/providers: the strong-agent CLIs as the built-in agents server finds them."""

from __future__ import annotations

from typing import Any, cast

from pydantic import ValidationError

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.host.host import ServerUnavailableError
from sidecar.host.types import UnknownToolError
from sidecar.protocol import (
    AGENTS_PROVIDERS,
    AgentProviderInfo,
    AgentProvidersResult,
    AgentsEmpty,
)

AGENTS_TOOL = "agents__agent_providers"
STARTING_WAIT_S = 5.0


@registry.method(AGENTS_PROVIDERS)
async def list_providers(svc: Services, params: AgentsEmpty) -> AgentProvidersResult:
    del params
    await svc.host.wait_ready()
    await svc.host.wait_starting(STARTING_WAIT_S)
    try:
        outcome = await svc.host.call(AGENTS_TOOL, {})
    except (UnknownToolError, ServerUnavailableError) as exc:
        return AgentProvidersResult(error=f"the agents server is not available: {exc}")
    structured = outcome.structured or {}
    rows = cast(list[Any], structured.get("providers") or [])
    if outcome.is_error or not rows:
        return AgentProvidersResult(error=outcome.text or "the agents server gave no report")
    try:
        providers = tuple(AgentProviderInfo.model_validate(row) for row in rows)
    except ValidationError as exc:
        return AgentProvidersResult(error=f"unexpected report from the agents server: {exc}")
    # The roster's availability follows the newest report.
    svc.coordinator.missing_providers = {
        p.provider: p.hint or "its CLI was not found" for p in providers if not p.installed
    }
    return AgentProvidersResult(providers=providers)
