"""Pytest fixtures for the scripted model servers.

Register with `pytest_plugins = ["tests.fakes.fixtures"]` in the root conftest, or import the
fixture names into a conftest. Each fixture yields a started server with an empty script; the test
queues replies with `server.push(Reply.text(...), ...)`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server


@pytest.fixture
def scripted_chat() -> Iterator[ScriptedModelServer]:
    """OpenAI Chat Completions fake; point clients at `scripted_chat.url + "/v1"`."""
    with openai_chat_server() as server:
        yield server
