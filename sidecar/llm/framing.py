"""What the planner writes around each earlier message it sends, so the context's token budget
counts the history as the model receives it.

DSPy's chat adapter sends an author's message as its `request` field with a reminder of the
output format, and an answer with its field markers (plus, on the text tool-calling path, an
empty `tool_calls` field). For a short message that is most of what the model reads: "What do
my notes say?" is 10 tokens as a message and 47 as sent. Counted without it, a window of short
messages held 2.4 times the tokens the budget allowed, past the model's window before
compaction began. tests/sidecar/llm/test_framing.py renders messages through DSPy and fails
when these strings no longer match.

Cheap to import (no DSPy): the context is assembled before the planner runs.
"""

from __future__ import annotations

from dataclasses import dataclass

_REQUEST = "[[ ## request ## ]]\n"
_REMINDER = (
    "\n\nRespond with the corresponding output fields, starting with the field "
    "`[[ ## answer ## ]]`{calls}, and then ending with the marker for `[[ ## completed ## ]]`."
)
_CALLS_REMINDER = (
    ', then `[[ ## tool_calls ## ]]` (must be a JSON object like {"tool_calls": '
    '[{"name": "...", "args": {...}}]})'
)
_ANSWER = "[[ ## answer ## ]]\n"
_NO_CALLS = '\n\n[[ ## tool_calls ## ]]\n{"tool_calls": []}'
_COMPLETED = "\n\n[[ ## completed ## ]]\n"


@dataclass(frozen=True, slots=True)
class Framing:
    """The text before and after an author's message and an answer, in the history as sent."""

    user: tuple[str, str]
    assistant: tuple[str, str]

    def wrap(self, role: str, content: str) -> str:
        """A message of `role` as the planner sends it (a role the history does not frame, as
        it is)."""
        before, after = (
            self.user if role == "user" else self.assistant if role == "assistant" else ("", "")
        )
        return f"{before}{content}{after}"

    def around(self, role: str) -> str:
        """All the framing of a message of `role`, to count its tokens."""
        return self.wrap(role, "")


NATIVE = Framing(
    user=(_REQUEST, _REMINDER.format(calls="")),
    assistant=(_ANSWER, _COMPLETED),
)
"""Native tool calling: the tools go as the provider's own parameter, not as fields."""

TEXT = Framing(
    user=(_REQUEST, _REMINDER.format(calls=_CALLS_REMINDER)),
    assistant=(_ANSWER, _NO_CALLS + _COMPLETED),
)
"""Text tool calling: every message carries the `tool_calls` field too."""

UNFRAMED = Framing(user=("", ""), assistant=("", ""))
"""A planner that sends the messages as they are."""


def framing_for(planner: object) -> Framing:
    """The framing `planner` writes: a `DspyPlanner` says which path it took once it has loaded
    (before that, the longer one, so the budget errs on the safe side); a planner that is not
    DSPy's frames nothing."""
    if not hasattr(planner, "native_tool_calling"):
        return UNFRAMED
    return NATIVE if getattr(planner, "native_tool_calling", None) is True else TEXT
