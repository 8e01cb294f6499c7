"""Unattended runs: what a turn a schedule or the heartbeat started does with a question nobody
answers (its source's `UnattendedPolicy`).

Such a turn is recorded with its policy when its first run starts (`attach`, in
`store.unattended`); the runs that continue it (a resume or retry, by the author or by a
deadline) carry the policy on, and a new turn on the thread (the author's message, a queued
one) ends it. Every run's end passes here before anyone hears of it (`RunManager`'s
`QuestionPolicy`), and so does every live question before it is asked. For each question the
turn asks:

- `wait`: it waits for the author, who is notified (the news goes to `Automation`);
- `deny_after`: its deadline (now + the policy's minutes) is recorded before the question is
  sent. At the deadline, still unanswered, it is answered no (`declined_answer`: an approval
  denied with the reason, a question or form declined, a plan rejected) through
  `RunManager.resume`, the one answer path: an answer the author gave first wins, since the
  thread is then busy with it or the question is no longer pending (the store's
  compare-and-set), and the deadline is let go;
- `skip`: the run ends at its first question. A paused turn's questions are dropped before they
  are sent and the run ends cancelled; a live question is refused unasked and the run is
  cancelled. Nothing that needed the answer ran; `run/retry` asks again.

Deadlines are rows, so a restart keeps them: `run_forever` answers those already past at once
(`recover` first gives a deadline to a question that has none, such as the one a crash's
recovery asked anew about a call, and ends a skipping turn that waits on one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from sidecar.protocol import RunCancelled, RunEventBody, RunFinished, UnattendedPolicy
from sidecar.runtime.clock import Clock
from sidecar.runtime.drive import RunEnd
from sidecar.runtime.errors import (
    InvalidResumeValueError,
    NoSuchInterruptError,
    ThreadBusyError,
)
from sidecar.runtime.runs import RunManager
from sidecar.store import InterruptRecord, Store, ThreadNotFoundError
from sidecar.store.unattended import Deadline, UnattendedTurn

log = logging.getLogger(__name__)

POLL_S = 60.0
SKIPPED = "it needed an answer and nobody was there"
CONTINUING = frozenset({"resume", "retry"})
"""Kinds of run that continue the thread's turn (any other kind but `plan` begins a new one)."""

Source = Literal["schedule", "heartbeat"]


@dataclass(frozen=True, slots=True)
class TurnNews:
    """What became of an unattended turn: it `asked` (under `deny_after`, `deadline` is the
    earliest of its questions'), a question of it was `declined` at its `deadline` and the
    turn goes on, it was `skipped`, or it `ended` (`final` says how)."""

    turn: UnattendedTurn
    what: Literal["asked", "declined", "skipped", "ended"]
    final: RunEventBody | None = None
    deadline: float | None = None


def unanswered_reason(turn: UnattendedTurn) -> str:
    """Why a question of `turn` was answered no: what the model (and the author) is told."""
    what = "heartbeat" if turn.source == "heartbeat" else "scheduled"
    minutes = "1 minute" if turn.minutes == 1 else f"{turn.minutes} minutes"
    return f"nobody answered within {minutes} (an unattended {what} run), so it was declined"


def deadline_text(deadline: float, zone: ZoneInfo) -> str:
    """A deadline as the author reads it in a notification: its local time, with the time zone."""
    return datetime.fromtimestamp(deadline, zone).strftime("%H:%M %Z")


def declined_answer(record: InterruptRecord, reason: str, *, uncertain: bool) -> dict[str, Any]:
    """The "no" to a question of kind `record.kind`, as its answer model takes it: approvals and
    sampling denied, plans rejected, forms declined, no change of a changeset accepted, a failed
    task's plan aborted, a question answered with the reason (a call that may have run before a
    crash: skipped, not run again)."""
    match record.kind:
        case "approval" | "sampling":
            return {"decision": "deny", "reason": reason}
        case "plan_approval":
            return {"decision": "reject", "reason": reason}
        case "form":
            return {"action": "decline"}
        case "changeset":
            return {"accepted": [], "reason": reason}
        case "escalation":
            return {"action": "abort"}
        case _ if uncertain:
            return {"answer": "skip"}
        case _:
            return {"answer": f"(No answer: {reason}. Go on without it.)"}


def _waits(end: RunEnd) -> bool:
    return isinstance(end.final, RunFinished) and end.final.outcome == "interrupted"


class Unattended:
    """The unattended turns of every thread and the deadlines of their questions. `news` hears
    what became of a turn between its runs' ends (a live question asked, a question declined,
    a skipping turn found waiting at start-up); `run_ended` says it at a run's end."""

    def __init__(
        self, store: Store, runs: RunManager, clock: Clock, news: Callable[[TurnNews], None]
    ) -> None:
        self._store = store
        self._repo = store.unattended
        self._runs = runs
        self.clock = clock
        self._news = news
        self._wake = asyncio.Event()
        self._busy: set[str] = set()
        self._skipping: dict[str, UnattendedTurn] = {}
        self._ended: dict[str, TurnNews] = {}
        self._cancels: set[asyncio.Task[bool]] = set()
        runs.set_question_policy(self)

    def poke(self) -> None:
        self._wake.set()

    def attach(
        self,
        thread_id: str,
        run_id: str,
        policy: UnattendedPolicy,
        *,
        source: Source,
        source_id: str,
        label: str,
    ) -> UnattendedTurn:
        """Run `run_id` (just started, nothing asked yet) begins a turn under `policy`."""
        turn = UnattendedTurn(
            thread_id=thread_id,
            run_id=run_id,
            first_run_id=run_id,
            source=source,
            source_id=source_id,
            label=label,
            action=policy.action,
            minutes=policy.minutes,
            since=self.clock.now(),
        )
        self._repo.attach(turn)
        return turn

    def turn_of(self, thread_id: str, run_id: str) -> UnattendedTurn | None:
        """The unattended turn run `run_id` is part of: the turn's own run, or a resume or
        retry of its thread, which continues it. A new turn on the thread ends it."""
        turn = self._repo.turn(thread_id)
        if turn is None or run_id == turn.run_id:
            return turn
        run = self._store.run(run_id)
        kind = run.kind if run is not None else ""
        if kind in CONTINUING:
            self._repo.move_turn(thread_id, run_id)
            return replace(turn, run_id=run_id)
        if kind != "plan":
            self._repo.end_turn(thread_id)
        return None

    # ---- the run manager's question policy ----------------------------------------------------

    def asking(self, thread_id: str, run_id: str, interrupt_id: str, kind: str) -> bool:
        """A live question of a running turn: a skipping turn refuses it and is cancelled."""
        del kind
        turn = self.turn_of(thread_id, run_id)
        if turn is None:
            return True
        if turn.action == "skip":
            self._skipping[run_id] = turn
            self._cancel(thread_id, run_id)
            return False
        deadline = None
        if turn.action == "deny_after":
            due = self.clock.now() + turn.minutes * 60
            deadline = self._repo.set_deadline(interrupt_id, thread_id, due)
            self.poke()
        self._news(TurnNews(turn, "asked", deadline=deadline))
        return True

    def ended(self, thread_id: str, run_id: str, end: RunEnd) -> RunEnd:
        """A run's end, before it is sent: a skipping turn's questions are dropped and the run
        ends cancelled; a denying turn's questions get their deadlines; a turn that finished,
        failed or was cancelled is over."""
        skipped = self._skipping.pop(run_id, None)
        if skipped is not None:
            self._repo.end_turn(thread_id)
            self._ended[run_id] = TurnNews(skipped, "skipped", end.final)
            return end
        turn = self.turn_of(thread_id, run_id)
        if turn is None:
            return end
        if not _waits(end):
            self._repo.end_turn(thread_id)
            self._ended[run_id] = TurnNews(turn, "ended", end.final)
            return end
        asked = self._questions(thread_id, run_id, end)
        if turn.action == "skip":
            return self._skip(turn, run_id, asked)
        deadline = None
        if turn.action == "deny_after":
            due = self.clock.now() + turn.minutes * 60
            with self._store.transaction():
                deadlines = [self._repo.set_deadline(q, thread_id, due) for q in asked]
            deadline = min(deadlines, default=None)
            self.poke()
        self._ended[run_id] = TurnNews(turn, "asked", end.final, deadline)
        return end

    def _questions(self, thread_id: str, run_id: str, end: RunEnd) -> list[str]:
        asked = [q.interrupt.id for q in end.questions]
        for record in self._store.pending_interrupts(thread_id):
            if record.run_id == run_id and record.id not in asked:
                asked.append(record.id)
        return asked

    def _skip(self, turn: UnattendedTurn, run_id: str, asked: list[str]) -> RunEnd:
        with self._store.transaction():
            for interrupt_id in asked:
                self._store.drop_interrupt(interrupt_id)
            self._store.end_run(run_id, "cancelled")
            self._store.set_thread_status(turn.thread_id, "cancelled")
            self._repo.end_turn(turn.thread_id)
        final = RunCancelled()
        self._ended[run_id] = TurnNews(turn, "skipped", final)
        return RunEnd(final)

    def _cancel(self, thread_id: str, run_id: str) -> None:
        async def cancel() -> bool:
            if self._runs.current_run(thread_id) != run_id:
                return False
            return await self._runs.cancel(thread_id)

        task = asyncio.ensure_future(cancel())
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    def run_ended(self, thread_id: str, run_id: str) -> TurnNews | None:
        """A run ended and its thread is free (an end listener): what became of its turn. A
        question of the thread that came due while it was busy is answered now."""
        if thread_id in self._busy:
            self._busy.discard(thread_id)
            self.poke()
        return self._ended.pop(run_id, None)

    # ---- deadlines ----------------------------------------------------------------------------

    def recover(self) -> None:
        """After a start: every pending question of a denying turn has a deadline (one a
        crash's recovery asked anew gets one from now); a skipping turn that waits on a
        question ends; a turn that waits on nothing is over."""
        now = self.clock.now()
        for turn in self._repo.turns():
            pending = [
                r
                for r in self._store.pending_interrupts(turn.thread_id)
                if not self._of_a_plan(r.run_id)
            ]
            if not pending and self._runs.current_run(turn.thread_id) is None:
                self._repo.end_turn(turn.thread_id)
            elif turn.action == "deny_after":
                for record in pending:
                    self._repo.set_deadline(record.id, turn.thread_id, now + turn.minutes * 60)
            elif turn.action == "skip" and pending:
                with self._store.transaction():
                    for record in pending:
                        self._store.drop_interrupt(record.id)
                    self._store.set_thread_status(turn.thread_id, "cancelled")
                    self._repo.end_turn(turn.thread_id)
                self._news(TurnNews(turn, "skipped", RunCancelled()))

    def _of_a_plan(self, run_id: str | None) -> bool:
        """A background plan's question (its run is the plan's, not the turn's)."""
        run = self._store.run(run_id) if run_id is not None else None
        return run is not None and run.kind == "plan"

    async def run_forever(self) -> None:
        """Answer each question at its deadline; sleeps until the next one (at most POLL_S) or
        until poked."""
        self.recover()
        while True:
            try:
                await self.tick()
            except Exception:  # a pass that fails is retried on the next one
                log.exception("unattended deadline pass failed")
            self._wake.clear()
            await self.clock.sleep(self._next_delay(), self._wake)

    def _next_delay(self) -> float:
        waiting = [d.deadline for d in self._repo.deadlines() if d.thread_id not in self._busy]
        if not waiting:
            return POLL_S
        return min(POLL_S, max(0.0, min(waiting) - self.clock.now()))

    async def tick(self) -> list[str]:
        """Answer no to every question past its deadline (one whose thread is busy waits for
        the thread's run to end); returns the ids answered."""
        now = self.clock.now()
        answered: list[str] = []
        for due in self._repo.deadlines():
            if due.deadline > now:
                break
            if due.thread_id not in self._busy and await self._decline(due):
                answered.append(due.interrupt_id)
        return answered

    async def _decline(self, due: Deadline) -> bool:
        record = next(
            (r for r in self._store.pending_interrupts(due.thread_id) if r.id == due.interrupt_id),
            None,
        )
        turn = self._repo.turn(due.thread_id)
        if record is None or turn is None:  # answered, dropped, or the turn is over
            self._repo.drop_deadline(due.interrupt_id)
            return False
        uncertain = self._store.uncertain_question(record.id) is not None
        value = declined_answer(record, unanswered_reason(turn), uncertain=uncertain)
        try:
            run_id = await self._runs.resume(due.thread_id, due.interrupt_id, value)
        except ThreadBusyError:
            self._busy.add(due.thread_id)
            return False
        except (NoSuchInterruptError, ThreadNotFoundError, InvalidResumeValueError) as exc:
            log.info("unattended question %s not declined: %s", due.interrupt_id, exc)
            self._repo.drop_deadline(due.interrupt_id)
            return False
        self._repo.drop_deadline(due.interrupt_id)
        if self._repo.turn(due.thread_id) is not None:
            self._repo.move_turn(due.thread_id, run_id)
        self._news(TurnNews(replace(turn, run_id=run_id), "declined", deadline=due.deadline))
        return True
