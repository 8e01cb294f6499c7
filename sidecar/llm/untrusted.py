"""Untrusted text marked as data: the one wrapper the planner is told never to obey.

Tool results, memories, summaries, older messages and the transcript sent for compaction were
written by tools, the model or the author; any of them may read like instructions. They reach
the model inside `<tool_output ... trust="untrusted">` tags (the planner's instructions say what
is inside is data), with any such tag inside the text defused, so the text cannot close its
wrapper early and speak outside it. Stdlib only: the graph and the compaction request use it
without loading DSPy.
"""

from __future__ import annotations

import re

UNTRUSTED_TAG = "tool_output"
_TAG_RE = re.compile(rf"<(/?){UNTRUSTED_TAG}", re.IGNORECASE)


def mark_untrusted(source: str, content: str) -> str:
    """`content` wrapped as untrusted data from `source` (a tool name, "memory", "history"),
    with every opening or closing tag inside it defused."""
    safe = _TAG_RE.sub(lambda m: f"&lt;{m.group(1)}{UNTRUSTED_TAG}", content)
    name = source.replace('"', "'")
    return f'<{UNTRUSTED_TAG} tool="{name}" trust="untrusted">\n{safe}\n</{UNTRUSTED_TAG}>'
