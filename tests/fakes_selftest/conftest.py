"""Fixtures for the fakes' self-tests; keeps LiteLLM from fetching its price map online."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.fakes.fixtures import (
    agent_clis,
    scripted_anthropic,
    scripted_chat,
    scripted_responses,
)

__all__ = ["agent_clis", "scripted_anthropic", "scripted_chat", "scripted_responses"]
