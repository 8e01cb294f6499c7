"""Test fakes: scripted model servers speaking real model-API wire formats on 127.0.0.1.

from tests.fakes import Reply, openai_chat_server
with openai_chat_server([Reply.tool_call("plan", {"n": 1}), Reply.text("done")]) as server:
    ...  # point the client at server.url + "/v1"; inspect server.generation_requests
"""

from tests.fakes.anthropic_messages import AnthropicMessagesDialect, anthropic_server
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import OpenAIChatDialect, openai_chat_server
from tests.fakes.openai_responses import OpenAIResponsesDialect, responses_server
from tests.fakes.script import RecordedRequest, Reply, ToolCall

__all__ = [
    "AnthropicMessagesDialect",
    "OpenAIChatDialect",
    "OpenAIResponsesDialect",
    "RecordedRequest",
    "Reply",
    "ScriptedModelServer",
    "ToolCall",
    "anthropic_server",
    "openai_chat_server",
    "responses_server",
]
