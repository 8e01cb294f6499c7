"""What a model following DSPy's ChatAdapter instructions writes, for scripted replies.

A real model answers in the adapter's field format; the planner streams the `answer` field token
by token. Plain text without the markers is accepted too, but arrives as one piece.
"""

from __future__ import annotations


def answer_text(answer: str) -> str:
    return f"[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"
