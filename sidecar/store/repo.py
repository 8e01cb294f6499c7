"""`Store`: the open database with its repositories, for the runtime, the graph and the handlers.

Each concept's SQL lives in its own repository module (threads, history, runs, interrupts,
grants, journal, approvals, plans, outbox, plan grants, uncertain calls, queue, heartbeat,
budgets, context, vectors, unattended turns, loaded tools). `Store` is every repository of the
conversation at once (they share its connection, so it is one object to the many callers written
against it) and carries the others as attributes: `store.queue`, `store.heartbeat`,
`store.budgets`, `store.contexts`, `store.unattended`, `store.loaded_tools`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sidecar.store.approvals import ApprovalRepo
from sidecar.store.budgets import BudgetRepo
from sidecar.store.context import ContextRepo
from sidecar.store.db import Database
from sidecar.store.grants import GrantRepo
from sidecar.store.heartbeat import HeartbeatRepo
from sidecar.store.history import HistoryRepo
from sidecar.store.interrupts import InterruptRepo
from sidecar.store.journal import JournalRepo
from sidecar.store.libraries import open_memory, open_schedule_book
from sidecar.store.loaded_tools import LoadedToolRepo
from sidecar.store.outbox import OutboxRepo
from sidecar.store.plan_grants import PlanGrantRepo
from sidecar.store.plans import PlanRepo
from sidecar.store.queue import QueueRepo
from sidecar.store.runs import RunRepo
from sidecar.store.threads import ThreadNotFoundError, ThreadRepo
from sidecar.store.unattended import UnattendedRepo
from sidecar.store.uncertain import UncertainRepo

if TYPE_CHECKING:
    from mcp_servers.memory import MemoryStore
    from mcp_servers.schedule import ScheduleBook

__all__ = ["Store", "ThreadNotFoundError"]


class Store(
    ThreadRepo,
    HistoryRepo,
    RunRepo,
    InterruptRepo,
    GrantRepo,
    JournalRepo,
    ApprovalRepo,
    PlanRepo,
    OutboxRepo,
    UncertainRepo,
    PlanGrantRepo,
):
    """Threads and the conversation of record, plus runs, interrupts, grants, the journal and
    plans; the queue, heartbeat, budget and context repositories as attributes."""

    def __init__(self, db: Database) -> None:
        super().__init__(db.conn)
        self.db = db
        self.queue = QueueRepo(db.conn)
        self.heartbeat = HeartbeatRepo(db.conn)
        self.budgets = BudgetRepo(db.conn)
        self.contexts = ContextRepo(db.conn)
        self.unattended = UnattendedRepo(db.conn)
        self.loaded_tools = LoadedToolRepo(db.conn)

    @contextmanager
    def transaction(self) -> Generator[None]:
        """One atomic write (`Database.transaction`); nested use is not supported."""
        with self.db.transaction():
            yield

    def open_memory(self) -> MemoryStore:
        """The memory tiers on this database (see `sidecar.store.libraries.open_memory`)."""
        return open_memory(self.db.conn)

    def open_schedule_book(
        self,
        *,
        default_timezone: str,
        now: Callable[[], float] = time.time,
        changed: Callable[[], None] = lambda: None,
    ) -> ScheduleBook:
        """The schedule book on this database."""
        return open_schedule_book(
            self.db.conn, default_timezone=default_timezone, now=now, changed=changed
        )
