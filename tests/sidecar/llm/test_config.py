from __future__ import annotations

import pytest

from sidecar.llm.config import (
    KEYRING_USERNAME,
    describe_how_to_configure,
    provider_key_vars,
    resolve_lm_config,
)
from sidecar.llm.types import LMConfig


class FakeKeyring:
    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret
        self.asked: list[str] = []

    def __call__(self, username: str) -> str | None:
        self.asked.append(username)
        return self.secret


def test_no_model_in_settings_or_environment_means_not_configured() -> None:
    keyring = FakeKeyring("sk-stored")
    assert resolve_lm_config(None, None, {"OPENAI_API_KEY": "sk-env"}, keyring) is None
    assert resolve_lm_config("  ", "", {"ATRIUM_MODEL": ""}, keyring) is None


def test_settings_model_and_base_win_over_environment() -> None:
    env = {
        "ATRIUM_MODEL": "openai/gpt-4o",
        "ATRIUM_MODEL_API_BASE": "http://env:1",
        "ATRIUM_MODEL_API_KEY": "sk-atrium",
    }
    config = resolve_lm_config("ollama_chat/llama3.1", "http://localhost:11434", env, FakeKeyring())
    assert config == LMConfig("ollama_chat/llama3.1", "http://localhost:11434", "sk-atrium")


def test_environment_supplies_model_and_base_when_settings_are_empty() -> None:
    env = {"ATRIUM_MODEL": " openai/gpt-4o-mini ", "ATRIUM_MODEL_API_BASE": "http://127.0.0.1:9/v1"}
    config = resolve_lm_config(None, "", env, FakeKeyring())
    assert config == LMConfig("openai/gpt-4o-mini", "http://127.0.0.1:9/v1", None)


def test_atrium_key_wins_over_the_provider_variable_and_the_keyring() -> None:
    keyring = FakeKeyring("sk-stored")
    env = {"ATRIUM_MODEL_API_KEY": "sk-atrium", "ANTHROPIC_API_KEY": "sk-ant"}
    config = resolve_lm_config("anthropic/claude-sonnet-4-5", None, env, keyring)
    assert config is not None and config.api_key == "sk-atrium"
    assert keyring.asked == []


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
        ("groq/llama-3.1-8b-instant", "GROQ_API_KEY"),
    ],
)
def test_the_provider_variable_is_used_when_there_is_no_atrium_key(
    model: str, variable: str
) -> None:
    keyring = FakeKeyring("sk-stored")
    config = resolve_lm_config(model, None, {variable: "sk-provider"}, keyring)
    assert config is not None and config.api_key == "sk-provider"
    assert keyring.asked == []


def test_another_providers_variable_is_not_used() -> None:
    config = resolve_lm_config(
        "anthropic/claude-sonnet-4-5", None, {"OPENAI_API_KEY": "sk-o"}, FakeKeyring()
    )
    assert config is not None and config.api_key is None


def test_the_keyring_is_the_last_resort() -> None:
    keyring = FakeKeyring("sk-stored")
    config = resolve_lm_config("openai/gpt-4o-mini", None, {}, keyring)
    assert config is not None and config.api_key == "sk-stored"
    assert keyring.asked == [KEYRING_USERNAME]


def test_local_models_need_no_key() -> None:
    config = resolve_lm_config("ollama_chat/llama3.1", "http://localhost:11434", {}, FakeKeyring())
    assert config == LMConfig("ollama_chat/llama3.1", "http://localhost:11434", None)
    assert provider_key_vars("ollama_chat/llama3.1") == ()


def test_the_key_never_shows_in_the_config_repr() -> None:
    config = resolve_lm_config(
        "openai/gpt-4o-mini", None, {"OPENAI_API_KEY": "sk-hidden"}, FakeKeyring()
    )
    assert "sk-hidden" not in repr(config)


def test_how_to_configure_names_settings_variables_and_examples() -> None:
    text = describe_how_to_configure()
    for needle in (
        "Settings",
        "ATRIUM_MODEL",
        "ATRIUM_MODEL_API_BASE",
        "ATRIUM_MODEL_API_KEY",
        "openai/gpt-4o-mini",
        "anthropic/claude-",
        "ollama_chat/llama3.1",
    ):
        assert needle in text
    assert "LiteLLM" not in text  # the author names a model, not a library's string
