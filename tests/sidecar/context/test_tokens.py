"""Token counts: tiktoken for OpenAI models (from LiteLLM's bundled files), an estimate else."""

from __future__ import annotations

import pytest

from sidecar.context.tokens import ESTIMATE, load_counter, openai_model_name


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("azure/gpt-4o", "gpt-4o"),
        ("anthropic/claude-sonnet-4-5", None),
        ("ollama_chat/llama3.1", None),
        (None, None),
    ],
)
def test_only_openai_models_get_the_openai_tokenizer(model: str | None, name: str | None) -> None:
    assert openai_model_name(model) == name


def test_an_openai_model_is_counted_with_tiktoken() -> None:
    counter = load_counter("openai/gpt-4o-mini")
    assert counter.name == "tiktoken:o200k_base"
    assert counter.count("hello world") == 2


def test_other_models_are_estimated_at_four_characters_per_token() -> None:
    counter = load_counter("ollama_chat/llama3.1")
    assert counter is ESTIMATE
    assert counter.count("x" * 10) == 3
    assert counter.message("x" * 10) == 7
