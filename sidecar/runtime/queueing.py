"""Talking while it works: a message for a busy thread is queued in the database, never refused.

Modes (per message; the thread's default otherwise):

- `steer`: the running turn reads it before its next planner step (`take_steering`, handed to
  the graph); if the turn ends first it becomes the next turn.
- `collect`: when the run ends, every queued collect message becomes one turn.
- `followup`: when the run ends, each becomes its own turn, in the order sent.
- `interrupt`: the running turn is cancelled at its next await (its checkpoint kept, its open
  calls closed with a result) and the message starts a new turn at once.

A thread is busy while a turn runs and while a turn waits on the author's answer to an
interrupt (then steer messages reach the turn after the answer; an `interrupt` message drops
the question and starts a new turn). Every status change is sent as `queue/update`; a queued
message can be edited or withdrawn until it is delivered. On start-up `drain_all` delivers what
a crash left queued, each message exactly once (delivery and the author's message are one
transaction).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Collection
from typing import Any

from sidecar.protocol import MAX_QUEUED_PER_THREAD, QueuedMessageInfo
from sidecar.runtime.errors import ThreadBusyError
from sidecar.runtime.runs import RunManager
from sidecar.store import Store
from sidecar.store.queue import QueuedRecord, QueueRepo
from sidecar.store.records import question_id

log = logging.getLogger(__name__)

MODES = ("steer", "collect", "followup", "interrupt")
DEFAULT_MODE = "steer"


class QueueFullError(Exception):
    """The thread already has MAX_QUEUED_PER_THREAD messages waiting."""


class NoSuchQueuedError(LookupError):
    """No queued message of this thread has that id."""


class AlreadyDeliveredError(Exception):
    """The message was delivered (or withdrawn) already: it can no longer change."""


def queued_info(record: QueuedRecord) -> QueuedMessageInfo:
    return QueuedMessageInfo(
        id=record.id,
        thread_id=record.thread_id,
        mode=record.mode,  # pyright: ignore[reportArgumentType]
        text=record.text,
        status=record.status,  # pyright: ignore[reportArgumentType]
        run_id=record.run_id,
        created_at=record.created_at,
        delivered_at=record.delivered_at,
        answered_at=record.answered_at,
        announcement=is_announcement(record),
    )


ANNOUNCEMENT_ID_PREFIX = "announce:"
"""The id of a queued message the sidecar itself queued: a delegated plan's report."""


def is_announcement(record: QueuedRecord) -> bool:
    return record.id.startswith(ANNOUNCEMENT_ID_PREFIX)


def next_batch(queued: list[QueuedRecord]) -> list[QueuedRecord]:
    """What the next turn carries: an interrupt message first (alone), else the oldest message
    with — for steer and collect — every other queued message of its mode. Announcements and
    the author's messages never share a turn's message: results that ended together are taken
    together, the author's words stay the author's."""
    if not queued:
        return []
    interrupts = [r for r in queued if r.mode == "interrupt"]
    if interrupts:
        return [interrupts[0]]
    first = queued[0]
    if first.mode == "followup":
        return [first]
    kind = is_announcement(first)
    return [r for r in queued if r.mode == first.mode and is_announcement(r) == kind]


class QueueDesk:
    """The busy path of `run/start` and the delivery of queued messages."""

    def __init__(
        self,
        store: Store,
        runs: RunManager,
        notify: Callable[[QueuedMessageInfo], None],
        default_mode: Callable[[], str] = lambda: DEFAULT_MODE,
    ) -> None:
        self._store = store
        self._repo = store.queue
        self._runs = runs
        self._notify = notify
        self._default_mode = default_mode
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._held: set[str] = set()
        self._drains: set[asyncio.Task[Any]] = set()
        runs.add_end_listener(self._run_ended)

    @property
    def repo(self) -> QueueRepo:
        return self._repo

    def mode_for(self, thread_id: str) -> str:
        return self._repo.default_mode(thread_id) or self._default_mode()

    def set_mode(self, thread_id: str, mode: str) -> None:
        """Raises:
        ThreadNotFoundError, ValueError (not a mode)."""
        self._store.get_thread(thread_id)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
        self._repo.set_default_mode(thread_id, mode)

    def waiting_on_author(self, thread_id: str) -> bool:
        """The last turn stopped on an interrupt nobody has answered yet."""
        record = self._store.get_thread(thread_id)
        return record.status == "interrupted" and bool(self._store.pending_interrupts(thread_id))

    async def submit(
        self, thread_id: str, text: str, mode: str | None = None, *, lane: str = "main"
    ) -> tuple[str, str | None]:
        """Start a turn, or queue the message if the thread is busy. Returns (run id, queued
        id); the run id is the new turn's, or the busy turn's when queued.

        Raises:
            ThreadNotFoundError, ValueError (unknown mode), QueueFullError.
        """
        self._store.get_thread(thread_id)
        mode = mode or self.mode_for(thread_id)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
        async with self._locks[thread_id]:
            running = self._runs.current_run(thread_id)
            waiting = running is None and self.waiting_on_author(thread_id)
            backlog = self._repo.count_queued(thread_id)
            if running is None and not backlog and (not waiting or mode == "interrupt"):
                try:
                    return await self._runs.start(thread_id, text, lane=lane), None
                except ThreadBusyError:  # a resume or retry got in first: queue behind it
                    running = self._runs.current_run(thread_id)
            if backlog >= MAX_QUEUED_PER_THREAD:
                raise QueueFullError(
                    f"{backlog} messages are already queued on this thread (the most is "
                    f"{MAX_QUEUED_PER_THREAD}); wait for the turn to take them or withdraw some"
                )
            record = self._repo.enqueue(thread_id, mode, text, lane)
            self._notify(queued_info(record))
            if mode == "interrupt" and running is not None:
                self._held.add(thread_id)
                try:
                    await self._runs.cancel(thread_id)
                finally:
                    self._held.discard(thread_id)
            if mode == "interrupt" or (running is None and not waiting):
                started = await self._deliver_next(thread_id)
                if started is not None:
                    return started, record.id
            return running or self._last_run(thread_id) or "", record.id

    def _last_run(self, thread_id: str) -> str | None:
        return self._store.last_run_id(thread_id)

    def take_steering(
        self, thread_id: str, turn_id: str | None = None, seen: Collection[str] = ()
    ) -> list[tuple[str, str]]:
        """The steer messages for the running turn, as (id, text): those queued, delivered to it
        now (written to the conversation and marked delivered in one transaction), after those
        this turn was given before but whose ids are not in `seen` (what the turn's state holds):
        a crash between the delivery and the planner step's checkpoint lost them from the
        state, and `run/retry` must not lose them from the turn. The graph calls this before
        each planner step of the author's thread."""
        run_id = self._runs.current_run(thread_id)
        if run_id is None:
            return []
        again = self._undelivered_to_state(thread_id, turn_id, seen) if turn_id else []
        steer = [r for r in self._repo.queued(thread_id) if r.mode == "steer"]
        if not steer and not again:
            return []
        with self._store.transaction():
            for record in steer:
                self._store.add_message(
                    thread_id, "user", record.text, message_id=f"queued:{record.id}"
                )
            self._repo.mark_delivered([r.id for r in steer], run_id)
            # Answered when this run completes, like the ones it took itself.
            self._repo.redeliver([r.id for r in again], run_id)
        self._announce([r.id for r in steer])
        return [(r.id, r.text) for r in [*again, *steer]]

    def _undelivered_to_state(
        self, thread_id: str, turn_id: str, seen: Collection[str]
    ) -> list[QueuedRecord]:
        """Steer messages delivered to this turn (after its first message in the conversation)
        and not yet answered, that the turn's state does not hold."""
        first = self._store.message_seq(question_id(turn_id))
        if first is None:
            return []
        found: list[QueuedRecord] = []
        for record in self._repo.open_messages(thread_id):
            if record.status != "delivered" or record.mode != "steer" or record.id in seen:
                continue
            seq = self._store.message_seq(f"queued:{record.id}")
            if seq is not None and seq > first:
                found.append(record)
        return found

    def edit(self, thread_id: str, message_id: str, text: str) -> QueuedMessageInfo:
        """Raises:
        NoSuchQueuedError, AlreadyDeliveredError."""
        self._own(thread_id, message_id)
        if not self._repo.edit(message_id, text):
            raise AlreadyDeliveredError(f"message {message_id} was delivered already")
        return self._announce([message_id])[0]

    def withdraw(self, thread_id: str, message_id: str) -> QueuedMessageInfo:
        """Raises:
        NoSuchQueuedError, AlreadyDeliveredError."""
        self._own(thread_id, message_id)
        if not self._repo.withdraw(message_id):
            raise AlreadyDeliveredError(f"message {message_id} was delivered already")
        return self._announce([message_id])[0]

    def listing(self, thread_id: str) -> list[QueuedMessageInfo]:
        self._store.get_thread(thread_id)
        return [queued_info(r) for r in self._repo.open_messages(thread_id)]

    def _own(self, thread_id: str, message_id: str) -> None:
        """Raises:
        NoSuchQueuedError: not an author's queued message of this thread (a plan's report the
            sidecar queued is not the author's to edit or withdraw)."""
        record = self._repo.get(message_id)
        if record is None or record.thread_id != thread_id or is_announcement(record):
            raise NoSuchQueuedError(f"no queued message {message_id!r} of yours on this thread")

    def _announce(self, message_ids: list[str]) -> list[QueuedMessageInfo]:
        infos: list[QueuedMessageInfo] = []
        for message_id in message_ids:
            record = self._repo.get(message_id)
            if record is not None:
                info = queued_info(record)
                infos.append(info)
                self._notify(info)
        return infos

    def _run_ended(self, thread_id: str, run_id: str, final: Any) -> None:
        if getattr(final, "type", "") == "run_finished" and final.outcome == "completed":
            self._announce(self._repo.mark_answered(run_id))
        if thread_id in self._held:
            return  # an interrupt message is being delivered by `submit`
        task = asyncio.ensure_future(self._drain(thread_id))
        self._drains.add(task)
        task.add_done_callback(self._drains.discard)

    async def deliver(self, thread_id: str) -> None:
        """Start the thread's next turn from its queue if it is idle (a message queued by the
        sidecar itself, such as a background plan's announcement, waits for this or for the
        running turn: steered into it, or its next turn when it ends)."""
        await self._drain(thread_id)

    async def _drain(self, thread_id: str) -> None:
        try:
            async with self._locks[thread_id]:
                if not self._store.has_thread(thread_id) or self.waiting_on_author(thread_id):
                    return
                await self._deliver_next(thread_id)
        except Exception:  # the messages stay queued: the next run end or restart retries
            log.exception("delivering the queue of thread %s failed", thread_id)

    async def _deliver_next(self, thread_id: str) -> str | None:
        """Start the next turn from the queue (caller holds the thread's lock), in the lane its
        messages were queued for: `cron` when all of them came from schedules, `main` as soon as
        one is the author's."""
        if self._runs.is_busy(thread_id):
            return None
        batch = next_batch(self._repo.queued(thread_id))
        if not batch:
            return None
        lane = "main" if any(r.lane == "main" for r in batch) else batch[0].lane
        ids = [r.id for r in batch]
        text = "\n\n".join(r.text for r in batch)

        def delivered(run_id: str) -> None:
            self._repo.mark_delivered(ids, run_id)

        run_id = await self._runs.start(thread_id, text, lane=lane, delivered=delivered)
        self._announce(ids)
        return run_id

    async def drain_all(self) -> None:
        """After a start-up: every thread that still has queued messages gets its next turn."""
        for thread_id in self._repo.threads_with_queued():
            await self._drain(thread_id)

    async def aclose(self) -> None:
        for task in list(self._drains):
            task.cancel()
