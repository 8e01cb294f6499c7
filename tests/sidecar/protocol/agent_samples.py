"""Samples of the agents-panel wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import AgentProviderInfo, AgentProvidersResult, AgentsEmpty, WireModel

AGENT_SAMPLES: dict[type[WireModel], WireModel] = {
    AgentsEmpty: AgentsEmpty(),
    AgentProvidersResult: AgentProvidersResult(
        providers=(
            AgentProviderInfo(
                provider="openclaw",
                installed=True,
                executable="/opt/peers/bin/openclaw",
                source="path",
                version="2026.9.6",
                version_text="openclaw 2026.9.6",
            ),
            AgentProviderInfo(
                provider="codex", installed=False, error="not found", hint="npm i -g @openai/codex"
            ),
        )
    ),
}
