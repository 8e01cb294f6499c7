"""Fixtures for the planner tests: a scripted Chat Completions server and planners pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from sidecar.llm import DspyPlanner, aclose_model_clients
from sidecar.llm.types import LMConfig, ToolSpec
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

# LiteLLM's model map says this one supports function calling: the native path.
NATIVE_MODEL = "openai/gpt-4o-mini"
# Unknown to LiteLLM's model map (no function calling): DSPy's text tool calls.
TEXT_MODEL = "openai/scripted-local-model"
API_KEY = "sk-test-0123456789"

WRITE_TOOL = ToolSpec(
    name="workspace__write",
    description="Write a text file in the workspace.",
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Relative path"},
            "text": {"type": "string"},
            "overwrite": {"type": "boolean"},
        },
        "required": ["path", "text"],
    },
)
READ_TOOL = ToolSpec(
    name="workspace__read",
    description="Read a text file in the workspace.",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)
TOOLS = [WRITE_TOOL, READ_TOOL]

PlannerFactory = Callable[..., DspyPlanner]


def answer_text(answer: str) -> str:
    """A reply in DSPy's ChatAdapter format, as a model following the prompt writes it."""
    return f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"


@pytest.fixture
def chat_server() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
async def make_planner(chat_server: ScriptedModelServer) -> AsyncIterator[PlannerFactory]:
    """Build planners against `chat_server`; LiteLLM's cached clients are closed afterwards."""

    def build(model: str = NATIVE_MODEL, **kwargs: float) -> DspyPlanner:
        config = LMConfig(model=model, api_base=chat_server.url + "/v1", api_key=API_KEY)
        kwargs.setdefault("num_retries", 0)
        kwargs.setdefault("timeout_s", 20.0)
        return DspyPlanner(config, **kwargs)  # type: ignore[arg-type]

    yield build
    await aclose_model_clients()
