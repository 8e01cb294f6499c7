"""Which model the planner talks to, and with which key — resolved without importing LiteLLM.

Precedence (first non-empty wins):

- model: the author's settings, else `ATRIUM_MODEL`;
- api base: the author's settings, else `ATRIUM_MODEL_API_BASE`;
- api key: `ATRIUM_MODEL_API_KEY`, else the provider's usual variable (`OPENAI_API_KEY`, ...),
  else the OS keyring (service `atrium`, username `model_api_key`).

Keys are only ever held in the returned `LMConfig`; nothing here writes or logs them. The provider
variable comes from a small table instead of LiteLLM because importing LiteLLM takes seconds and
this runs on the sidecar's startup path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TypeAlias

from sidecar.llm.types import LMConfig

logger = logging.getLogger(__name__)

MODEL_ENV = "ATRIUM_MODEL"
API_BASE_ENV = "ATRIUM_MODEL_API_BASE"
API_KEY_ENV = "ATRIUM_MODEL_API_KEY"
KEYRING_SERVICE = "atrium"
KEYRING_USERNAME = "model_api_key"

KeyringLookup: TypeAlias = Callable[[str], str | None]

# LiteLLM provider prefix -> the variables LiteLLM itself reads for that provider's key.
_PROVIDER_KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "dashscope": ("DASHSCOPE_API_KEY",),
}

# Bare model names (no `provider/` prefix) that LiteLLM routes by name.
_BARE_NAME_PROVIDERS: tuple[tuple[str, str], ...] = (
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
)


def resolve_lm_config(
    settings_model: str | None,
    settings_api_base: str | None,
    env: Mapping[str, str],
    keyring_lookup: KeyringLookup,
) -> LMConfig | None:
    """Resolve the planner's model configuration; None when no model is configured.

    `keyring_lookup(username)` returns the secret stored under service `atrium` for that username
    (the app reads it through `sidecar.keychain`; tests inject a fake). It is consulted only
    when no key is found in the environment.
    """
    model = _first(settings_model, env.get(MODEL_ENV))
    if model is None:
        return None
    api_base = _first(settings_api_base, env.get(API_BASE_ENV))
    api_key = _first(env.get(API_KEY_ENV), *(env.get(v) for v in provider_key_vars(model)))
    if api_key is None:
        api_key = _first(keyring_lookup(KEYRING_USERNAME))
    return LMConfig(model=model, api_base=api_base, api_key=api_key)


def missing_key(config: LMConfig) -> str | None:
    """Why a request to `config`'s model would carry no key its provider needs (for "Details"),
    or None: a key is set, the model runs on a server of the author's own (an API base), or its
    provider needs none that Atrium knows of."""
    if config.api_key or config.api_base:
        return None
    names = provider_key_vars(config.model)
    if not names:
        return None
    variables = ", ".join((API_KEY_ENV, *names))
    return (
        f"no API key for {provider_of(config.model)}: none stored in Settings → Model, and none "
        f"in the environment ({variables})"
    )


def provider_of(model: str) -> str | None:
    """The LiteLLM provider a model string names (`anthropic/claude-...` -> `anthropic`)."""
    prefix, slash, _ = model.partition("/")
    if slash:
        return prefix.strip().lower() or None
    name = model.strip().lower()
    return next(
        (provider for start, provider in _BARE_NAME_PROVIDERS if name.startswith(start)), None
    )


def provider_key_vars(model: str) -> tuple[str, ...]:
    """The environment variables that usually hold the key for `model`'s provider (maybe none)."""
    provider = provider_of(model)
    return _PROVIDER_KEY_VARS.get(provider, ()) if provider else ()


def describe_how_to_configure() -> str:
    """What the author reads when no model is configured (shown as the assistant's answer)."""
    return (
        "No model is configured yet, so I can only run direct commands (`/tools`, `/call ...`).\n"
        "\n"
        "To connect a model, open Settings → Model and enter the model's name with its "
        "provider (for example `openai/gpt-4o-mini`), an API base if the model runs on your own "
        "server, and an API key (kept in the system keyring, or where you choose if there is "
        "none).\n"
        "\n"
        "Or set environment variables before starting Atrium:\n"
        f"- `{MODEL_ENV}`: the model, for example `openai/gpt-4o-mini`, "
        "`anthropic/claude-sonnet-4-5` or `ollama_chat/llama3.1`\n"
        f"- `{API_BASE_ENV}`: the server address for local or OpenAI-compatible models, "
        "for example `http://localhost:11434` for Ollama\n"
        f"- `{API_KEY_ENV}`: the API key (or the provider's usual variable, such as "
        "`OPENAI_API_KEY` or `ANTHROPIC_API_KEY`)\n"
        "\n"
        "Examples:\n"
        f"    {MODEL_ENV}=openai/gpt-4o-mini OPENAI_API_KEY=sk-...\n"
        f"    {MODEL_ENV}=anthropic/claude-sonnet-4-5 ANTHROPIC_API_KEY=sk-ant-...\n"
        f"    {MODEL_ENV}=ollama_chat/llama3.1 {API_BASE_ENV}=http://localhost:11434"
    )


def _first(*values: str | None) -> str | None:
    """The first value that is not None or blank, stripped."""
    for value in values:
        if value is not None and value.strip():
            return value.strip()
    return None
