"""The configured model, read anew on every turn: its planner, a planner per subagent model, and
the embedding model.

Settings may change between turns (the author picks another model, stores a key), so the
configuration is resolved each time it is asked for; a planner is reused for as long as its
configuration stays the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from sidecar.llm.config import resolve_lm_config
from sidecar.llm.embeddings import MODEL_ENV as EMBEDDING_MODEL_ENV
from sidecar.llm.embeddings import Embedder, embedding_config
from sidecar.llm.planner import DspyPlanner
from sidecar.llm.types import LMConfig
from sidecar.model_key import ModelKey
from sidecar.settings import SettingsFile


class PlannerProvider:
    """Resolves the model configuration on every turn (settings may have changed) and reuses a
    planner for as long as the configuration stays the same."""

    def __init__(self, settings: SettingsFile, env: Mapping[str, str], key: ModelKey) -> None:
        self._settings = settings
        self._env = env
        self._key = key
        self._cached: tuple[LMConfig, DspyPlanner] | None = None
        self._others: dict[str, tuple[LMConfig, DspyPlanner]] = {}
        self._embedder: Embedder | None = None

    def config(self) -> LMConfig | None:
        """The model configuration now (None: no model is configured)."""
        saved = self._settings.load()
        return resolve_lm_config(saved.model, saved.api_base, self._env, self._stored_key)

    def __call__(self) -> DspyPlanner | None:
        config = self.config()
        if config is None:
            return None
        if self._cached is None or self._cached[0] != config:
            self._cached = (config, DspyPlanner(config))
        return self._cached[1]

    def embedder(self) -> Embedder | None:
        """The embedding model for finding memories by meaning (None unless one is named)."""
        if not (self._env.get(EMBEDDING_MODEL_ENV) or "").strip():
            return None  # off: no need to resolve the chat model's endpoint on every turn
        config = embedding_config(self._env, self.config())
        if config is None:
            return None
        if self._embedder is None or self._embedder.config != config:
            self._embedder = Embedder(config)
        return self._embedder

    def for_model(self, model: str) -> DspyPlanner | None:
        """A planner on another model (a subagent profile's), same endpoint and key."""
        config = self.config()
        if config is None:
            return None
        key = dataclasses.replace(config, model=model)
        cached = self._others.get(model)
        if cached is None or cached[0] != key:
            cached = self._others[model] = (key, DspyPlanner(key))
        return cached[1]

    def _stored_key(self, name: str) -> str | None:
        """The key the author stored (keyring, file or session): the lookup after the
        environment's."""
        del name
        return self._key.value()
