"""Runs of the main graph: start, resume, retry, cancel; events; checkpoints; crash recovery."""
