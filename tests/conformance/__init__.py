"""The official MCP conformance suite (`@modelcontextprotocol/conformance`) against Atrium: the
client suite against the host (through the sidecar's own wire), the server suite against each
built-in server over HTTP. `python -m tests.conformance` (`make conformance`) runs both."""
