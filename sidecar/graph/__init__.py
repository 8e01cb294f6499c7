"""The main graph: context → planner ⇄ tool / dispatch / interrupt → persist."""
