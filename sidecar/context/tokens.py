"""Counting tokens: the model's own tokenizer where it is known, a documented estimate otherwise.

OpenAI models (`openai/...`, `gpt-...`, `o1`/`o3`/`o4`...) are counted with tiktoken, using the
encoding files LiteLLM ships (so nothing is downloaded). Any other model is estimated at one
token per 4 characters of text, rounded up, plus 4 tokens per message for its framing; that is
close for English prose with the tokenizers of Claude, Llama and Mistral and errs on the long
side for code. Loading an encoding takes up to half a second, so `load_counter` runs in a worker
thread; counts are cached by text.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
_CACHE_SIZE = 20_000
_OPENAI_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4", "text-embedding")


class TokenCounter:
    """Counts the tokens of a text; `name` says how ("tiktoken:o200k_base" or "estimate")."""

    def __init__(self, name: str, encode: Callable[[str], int] | None = None) -> None:
        self.name = name
        self._encode = encode
        self._cache: OrderedDict[str, int] = OrderedDict()

    def count(self, text: str) -> int:
        if self._encode is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        value = self._encode(text)
        self._cache[text] = value
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return value

    def message(self, text: str) -> int:
        """Tokens of one message of the conversation, its framing included."""
        return self.count(text) + MESSAGE_OVERHEAD


ESTIMATE = TokenCounter("estimate (1 token per 4 characters)")
_LOADED: dict[str, TokenCounter] = {}


def openai_model_name(model: str | None) -> str | None:
    """The bare OpenAI model name of a LiteLLM model string, or None for other providers."""
    if not model:
        return None
    provider, slash, name = model.partition("/")
    if slash and provider.lower() not in ("openai", "azure", "text-completion-openai"):
        return None
    bare = (name if slash else model).strip().lower()
    return bare if bare.startswith(_OPENAI_PREFIXES) else None


def load_counter(model: str | None) -> TokenCounter:
    """The counter for `model` (blocking: may load an encoding; call it off the event loop)."""
    name = openai_model_name(model)
    if name is None:
        return ESTIMATE
    try:
        import tiktoken

        _point_tiktoken_at_bundled_files()
        try:
            encoding_name = tiktoken.encoding_name_for_model(name)
        except KeyError:
            encoding_name = "o200k_base"
        counter = _LOADED.get(encoding_name)
        if counter is None:
            encoding: Any = tiktoken.get_encoding(encoding_name)

            def encode(text: str) -> int:
                return len(encoding.encode(text, disallowed_special=()))

            counter = _LOADED[encoding_name] = TokenCounter(f"tiktoken:{encoding_name}", encode)
        return counter
    except (ImportError, OSError, ValueError):
        # No encoding file here (tiktoken's download attempt fails offline with an OSError).
        return ESTIMATE


def _point_tiktoken_at_bundled_files() -> None:
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return
    bundled = (
        Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    )
    if bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
