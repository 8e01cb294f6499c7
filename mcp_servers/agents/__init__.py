"""Strong-agent controllers (Claude Code, Codex, OpenClaw) behind one normalized contract.

Public API: `mcp_servers.agents.controllers` (controllers, configs, `build_controller`),
`mcp_servers.agents.requests` (start/resume requests, permission decisions),
`mcp_servers.agents.events` (normalized events), `mcp_servers.agents.results` (`OperatorResult`),
`mcp_servers.agents.parsers` (pure stdout parsers, `replay_lines`).
"""
