"""Window state as plain Python (no Qt), plus thin Qt item models in `*_model` modules.

Import the Qt adapters from their modules; this package's namespace stays Qt-free.
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
