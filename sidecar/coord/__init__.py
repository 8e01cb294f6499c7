"""Subagent profiles, task plans (DAG validation) and A2A envelopes: the coordinator's
vocabulary, free of the graph, the store and the wire so every layer above can use it."""
