"""Embeddings for finding memories by meaning: off unless the author names an embedding model.

- model: `ATRIUM_EMBEDDING_MODEL`, a LiteLLM model string such as
  `openai/text-embedding-3-small` or `ollama/nomic-embed-text`;
- api base: `ATRIUM_EMBEDDING_API_BASE`, else the chat model's;
- api key: `ATRIUM_EMBEDDING_API_KEY`, else the chat model's.

Requests go through DSPy's `Embedder` (LiteLLM underneath), like every other model call; DSPy
hands back numpy arrays, so numpy is only imported once an embedding model is configured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sidecar.llm.types import LMConfig

MODEL_ENV = "ATRIUM_EMBEDDING_MODEL"
API_BASE_ENV = "ATRIUM_EMBEDDING_API_BASE"
API_KEY_ENV = "ATRIUM_EMBEDDING_API_KEY"
BATCH = 64


@dataclass(frozen=True)
class EmbeddingConfig:
    """A resolved embedding model. `api_key` never leaves memory."""

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)


def embedding_config(env: Mapping[str, str], chat: LMConfig | None) -> EmbeddingConfig | None:
    """The embedding model the environment names (None: search by meaning is off)."""
    model = (env.get(MODEL_ENV) or "").strip()
    if not model:
        return None
    api_base = (env.get(API_BASE_ENV) or "").strip() or (chat.api_base if chat else None)
    api_key = (env.get(API_KEY_ENV) or "").strip() or (chat.api_key if chat else None)
    return EmbeddingConfig(model, api_base or None, api_key or None)


class Embedder:
    """One embedding model, reached through DSPy."""

    def __init__(self, config: EmbeddingConfig) -> None:
        self.config = config
        self._embedder: Any = None

    @property
    def model(self) -> str:
        return self.config.model

    async def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's vector as float32 bytes, L2-normalized (so a dot product is the cosine).

        Raises:
            Exception: whatever the provider or LiteLLM raised (the caller decides what that
            costs: search by meaning is never required).
        """
        import numpy as np

        if not texts:
            return []
        if self._embedder is None:
            import dspy  # pyright: ignore[reportMissingTypeStubs]

            options: dict[str, Any] = {}
            if self.config.api_base:
                options["api_base"] = self.config.api_base
            if self.config.api_key:
                options["api_key"] = self.config.api_key
            self._embedder = dspy.Embedder(
                self.config.model, batch_size=BATCH, caching=False, **options
            )
        rows = np.asarray(await self._embedder.acall(list(texts)), dtype=np.float32)
        if rows.ndim == 1:
            rows = rows.reshape(1, -1)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        rows = rows / np.where(norms == 0, 1.0, norms)
        return [row.tobytes() for row in rows]
