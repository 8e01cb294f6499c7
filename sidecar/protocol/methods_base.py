"""The method table's entry type, shared by every module that declares methods."""

from __future__ import annotations

from dataclasses import dataclass

from sidecar.protocol.models_base import WireModel


@dataclass(frozen=True, slots=True)
class MethodSpec:
    params: type[WireModel]
    result: type[WireModel]
    doc: str
