"""The review gate for strong agents that write (DESIGN.md §15).

A writing strong agent never works in the author's workspace. It gets an isolated copy
(`isolation`: a git worktree when the workspace is a repository, else a snapshot folder), and
what it changed there comes back as a changeset (`changeset`: files added, changed, deleted,
with unified diffs, binary files marked) computed against the manifest of the base it was
copied from (`manifest`). The author accepts files one by one; `apply` brings exactly the
accepted files into the workspace and refuses any the author changed meanwhile (a conflict).

Everything here is blocking file and git work with a deadline: callers run it off the event
loop. Nothing here knows the graph, the store or the wire.
"""
