"""Window state as plain Python, no Qt (a contract holds it): the views follow its events.

The thin Qt item models over it (`ThreadListModel`, `TranscriptListModel`) live beside their
views in `desktop.views`.
"""

from desktop.models.emitter import Emitter
from desktop.models.inbox import InterruptInbox
from desktop.models.session import SessionState
from desktop.models.threads import RunState, ThreadsState, describe_run
from desktop.models.transcript import Transcript
from desktop.models.transcript_entries import (
    MessageEntry,
    NoticeEntry,
    ToolCallEntry,
    TranscriptEntry,
)

__all__ = [
    "Emitter",
    "InterruptInbox",
    "MessageEntry",
    "NoticeEntry",
    "RunState",
    "SessionState",
    "ThreadsState",
    "ToolCallEntry",
    "Transcript",
    "TranscriptEntry",
    "describe_run",
]
