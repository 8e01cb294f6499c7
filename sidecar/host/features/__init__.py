"""The MCP client features the host offers servers: what it answers when a server asks.

`client.HostFeatures` is the one object sessions talk to (roots, elicitation, sampling, logging,
list-changed); `elicit` checks a form answer against the server's schema, `sampling` turns a
server's createMessage into a planner call (after the author approves), `logs` keeps each
server's log lines, `catalog` caches resources and prompts. A request made during a tool call
finds its run (and so its author) through `sidecar.binding.calls`.
"""
