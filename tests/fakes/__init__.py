"""Test fakes: scripted model servers speaking real model-API wire formats on 127.0.0.1."""

from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer, ToolCall

__all__ = ["RecordedRequest", "Reply", "ScriptedModelServer", "ToolCall"]
