"""Subagents: one task of a plan, run on its own sub-thread (internal) or by a strong agent
through the agents MCP server, with dependencies, caps, retries, stalls and escalation."""
