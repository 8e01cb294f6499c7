"""How remembered text reaches the planner: as data, marked the way tool output is.

Memories, summaries and older messages were written by the model or pasted by the author; they
may contain text that reads like instructions. They are wrapped in the same untrusted-data tags
the planner puts around tool results (`sidecar.llm.untrusted`, the one wrapper: the planner's
instructions say never to follow what is inside), with any tag inside defused so the text cannot
close the wrapper early.
"""

from __future__ import annotations

from sidecar.llm.untrusted import mark_untrusted


def mark_data(source: str, content: str) -> str:
    """`content` wrapped as untrusted data from `source` (e.g. "memory")."""
    return mark_untrusted(source, content)


def identity_note(path: str, role: str, text: str) -> str:
    """An identity file as a pinned system note: the author's own words, shown byte-exact."""
    return (
        f"From the author's file {path} ({role}; pinned, always present):\n{text}\n[end of {path}]"
    )
