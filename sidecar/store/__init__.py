"""The one SQLite database: threads, messages, runs, events, interrupts, grants, tool journal.

LangGraph's checkpoint tables live in the same file (see `sidecar.runtime.checkpoints`).
"""

from sidecar.store.db import Database, open_database
from sidecar.store.plans import OutboxRecord, PlanRecord, TaskRecord
from sidecar.store.records import (
    GrantRecord,
    InterruptRecord,
    JournalRecord,
    MessageRecord,
    RunRecord,
    ThreadRecord,
)
from sidecar.store.repo import Store, ThreadNotFoundError

__all__ = [
    "Database",
    "GrantRecord",
    "InterruptRecord",
    "JournalRecord",
    "MessageRecord",
    "OutboxRecord",
    "PlanRecord",
    "RunRecord",
    "Store",
    "TaskRecord",
    "ThreadNotFoundError",
    "ThreadRecord",
    "open_database",
]
