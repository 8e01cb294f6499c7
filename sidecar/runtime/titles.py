"""Naming an untitled thread after the author's message, as chat apps name a new conversation.

A thread made with "New thread" is titled `DEFAULT_THREAD_TITLE` until a turn it started ends:
then its title is the author's message, shortened (its first line with text, without Markdown's
leading marks, cut at a word within `TITLE_LENGTH` characters). Deterministic, and no model call.
A title the author gave is never replaced: only a thread still titled `DEFAULT_THREAD_TITLE` is
named (so a thread the author named "New thread" themselves is named too). A direct command
(`/tools`) names nothing.
"""

from __future__ import annotations

import re

from sidecar.graph.commands import is_command
from sidecar.protocol import DEFAULT_THREAD_TITLE
from sidecar.store import Store, ThreadNotFoundError

TITLE_LENGTH = 48
_LEADING_MARKS = re.compile(r"^\s*(?:(?:#{1,6}|>|[-*+]|\d{1,9}[.)])\s+)*")
_INLINE_MARKS = re.compile(r"\*\*|__|`")


def title_from_message(text: str) -> str | None:
    """A title from the author's message (None: it has no words)."""
    for line in text.splitlines():
        words = _INLINE_MARKS.sub("", _LEADING_MARKS.sub("", line)).split()
        if words:
            break
    else:
        return None
    title = " ".join(words)
    if len(title) <= TITLE_LENGTH:
        return title
    cut = title[: TITLE_LENGTH - 1]
    space = cut.rfind(" ")
    if space >= TITLE_LENGTH // 2:  # cut at a word, unless that drops most of it
        cut = cut[:space]
    return cut.rstrip(" ,.;:-\u2013\u2014") + "…"


def name_untitled(store: Store, thread_id: str, text: str) -> str | None:
    """Title the thread after `text` if it is still untitled; the new title, or None when the
    thread keeps its own (it has one, it is gone, or `text` is a command or has no words)."""
    if is_command(text):
        return None
    title = title_from_message(text)
    if title is None:
        return None
    try:
        if store.get_thread(thread_id).title != DEFAULT_THREAD_TITLE:
            return None
        store.rename_thread(thread_id, title)
    except ThreadNotFoundError:  # deleted while its turn ran
        return None
    return title
