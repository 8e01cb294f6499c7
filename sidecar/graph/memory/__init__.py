"""Memory and context for the graph: identity files, the token budget, context assembly,
compaction, and memory writes staged in graph state until persist flushes them."""
