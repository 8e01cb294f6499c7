"""What LiteLLM knows of a model: its input window and the price of its tokens.

Both read LiteLLM's bundled model map. Importing LiteLLM takes seconds, so `model_window` is
called from a worker thread; `turn_cost` runs only once a planner has loaded LiteLLM (a turn
that used a model), and says None otherwise.
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any


@functools.lru_cache(maxsize=64)
def model_window(model: str) -> int | None:
    """The model's input window in tokens, or None when LiteLLM does not know the model
    (blocking: may import LiteLLM)."""
    litellm: Any = importlib.import_module("litellm")
    try:
        info: Any = litellm.get_model_info(model)
    except Exception:  # LiteLLM raises a bare Exception for a model missing from its map
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if isinstance(value, int | float) and value > 0 else None


def turn_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of these tokens in USD from LiteLLM's map; None if unknown or not loaded."""
    litellm: Any = sys.modules.get("litellm")
    if litellm is None or not (prompt_tokens or completion_tokens):
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # a model missing from the map: LiteLLM raises a bare Exception
        return None
    return float(prompt) + float(completion)
