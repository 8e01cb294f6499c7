"""`settings/get` names where the model's key comes from, in the planner's own order."""

from __future__ import annotations

import pytest

from sidecar.handlers.settings import key_source_of
from sidecar.llm.config import resolve_lm_config


def test_atrium_model_api_key_wins_over_the_provider_variable() -> None:
    env = {"ATRIUM_MODEL_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}
    assert key_source_of("openai/gpt-4o-mini", env) == ("environment", "ATRIUM_MODEL_API_KEY")


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("gpt-4o", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.0-flash", "GOOGLE_API_KEY"),
    ],
)
def test_the_provider_variable_is_named(model: str, variable: str) -> None:
    assert key_source_of(model, {variable: "k"}) == ("provider", variable)


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("openai/gpt-4o-mini", {}),
        ("openai/gpt-4o-mini", {"OPENAI_API_KEY": "   ", "ATRIUM_MODEL_API_KEY": ""}),
        ("openai/gpt-4o-mini", {"ANTHROPIC_API_KEY": "k"}),  # another provider's key
        ("ollama_chat/llama3.1", {"OPENAI_API_KEY": "k"}),
        (None, {"OPENAI_API_KEY": "k"}),
    ],
    ids=["nothing", "blank", "other-provider", "local-model", "no-model"],
)
def test_without_a_variable_for_this_model_the_keyring_is_next(
    model: str | None, env: dict[str, str]
) -> None:
    assert key_source_of(model, env) == ("none", None)


@pytest.mark.parametrize(
    "env",
    [
        {"ATRIUM_MODEL_API_KEY": "from-atrium", "OPENAI_API_KEY": "from-provider"},
        {"OPENAI_API_KEY": "from-provider"},
        {},
    ],
)
def test_the_named_source_is_the_key_the_planner_uses(env: dict[str, str]) -> None:
    model = "openai/gpt-4o-mini"
    config = resolve_lm_config(model, None, env, lambda _user: "from-keyring")
    assert config is not None
    source, variable = key_source_of(model, env)
    expected = env[variable] if variable else "from-keyring"
    assert source in ("environment", "provider", "none")
    assert config.api_key == expected
