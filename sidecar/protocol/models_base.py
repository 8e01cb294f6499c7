"""The base of every wire model: strict (unknown fields refused) and immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
