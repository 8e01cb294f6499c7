"""Pytest fixtures for the scripted model servers and the pinned agent CLIs.

Register with `pytest_plugins = ["tests.fakes.fixtures"]` in the root conftest, or import the
fixture names into a conftest. Each server fixture yields a started server with an empty script;
the test queues replies with `server.push(Reply.text(...), ...)`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.fakes.openai_responses import responses_server
from tests.peers import peer_unavailable
from tests.setup.agent_clis import AgentClis, AgentCliUnavailable, install_agent_clis


@pytest.fixture
def scripted_chat() -> Iterator[ScriptedModelServer]:
    """OpenAI Chat Completions fake; point clients at `scripted_chat.url + "/v1"`."""
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def scripted_anthropic() -> Iterator[ScriptedModelServer]:
    """Anthropic Messages fake; `ANTHROPIC_BASE_URL = scripted_anthropic.url`."""
    with anthropic_server() as server:
        yield server


@pytest.fixture
def scripted_responses() -> Iterator[ScriptedModelServer]:
    """OpenAI Responses fake (Codex); provider `base_url = scripted_responses.url + "/v1"`."""
    with responses_server() as server:
        yield server


@pytest.fixture(scope="session")
def agent_clis() -> AgentClis:
    """The pinned Claude Code / Codex binaries, installed on first use; skips without npm."""
    try:
        return install_agent_clis()
    except AgentCliUnavailable as exc:
        peer_unavailable(f"agent CLIs: {exc}")
