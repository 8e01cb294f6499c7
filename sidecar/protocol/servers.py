"""Wire methods for plugged-in MCP servers and standing grants (issue 4: host and panels).

Declare params/result models here and add each method to SERVER_METHODS; `methods.METHODS`
includes them.
"""

from __future__ import annotations

from sidecar.protocol.methods_base import MethodSpec

SERVER_METHODS: dict[str, MethodSpec] = {}
