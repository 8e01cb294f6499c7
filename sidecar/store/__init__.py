"""The one database: every SQL statement of the sidecar, one repository per concept.

`open_database` opens the file and brings every registered schema part up to date
(`sidecar.store.schema`); `Store` is the open database with its repositories. LangGraph's
checkpoint tables live in the same file (see `sidecar.runtime.checkpoints`).
"""

from sidecar.store.db import Database, open_database
from sidecar.store.outbox import OutboxRecord
from sidecar.store.plans import PlanRecord, TaskRecord
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
