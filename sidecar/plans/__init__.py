"""Plans: a goal and a DAG of tasks handed to subagents and strong agents.

What a plan is (`dag`, `profiles`, `envelope`, `routines`), how its tasks run (`runner`,
`attempt`, `internal`, `strong`, `verify`, `escalation`, `finish`), what they may spend
(`plan_budget`, `thread_budget`), the coordinator's live state (`coordinator`) and the review
gate around writing strong agents (`review/`). Free of the wire and of the graph's wiring: the
graph's nodes call into it with `PlanDeps`.
"""
