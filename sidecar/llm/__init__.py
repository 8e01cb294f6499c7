"""The LLM layer: DSPy signatures, LM configuration and the planner the graph calls."""
