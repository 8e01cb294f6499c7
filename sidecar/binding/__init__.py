"""The binding between a running turn and the tool calls it makes.

runtime/ binds a run to its task (`calls.bind_run`); the graph's tool node and the subagent
runner register each call (`calls.in_flight`, `calls.task_scope`); the host's client features
find the call a server request belongs to (`calls.InFlightCalls.owner`) and ask its author; a
call's idle limit (`deadline.IdleDeadline`) pauses while the author answers. It sits below
every other sidecar package and imports none of them.
"""
