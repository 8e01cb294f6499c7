"""Wire methods for MCP client features: resources, prompts, server logs (issue 4).

Declare params/result models here and add each method to FEATURE_METHODS; `methods.METHODS`
includes them.
"""

from __future__ import annotations

from sidecar.protocol.methods_base import MethodSpec

FEATURE_METHODS: dict[str, MethodSpec] = {}
