"""The run manager: at most one running turn per thread; start, resume, retry, cancel."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Protocol

from sidecar.binding.calls import bind_run
from sidecar.graph.commands import is_command
from sidecar.plans.dag import PlanError
from sidecar.plans.profiles import DEFAULT_PROFILES, Profile
from sidecar.plans.shapes import validate_edit
from sidecar.protocol import RunCancelled, ThreadRenamed
from sidecar.runtime.drive import RunEnd, drive
from sidecar.runtime.emitter import EventSink, RunEmitter
from sidecar.runtime.errors import (
    InvalidResumeValueError,
    NoSuchInterruptError,
    NothingToResumeError,
    ThreadBusyError,
)
from sidecar.runtime.interrupts import (
    Origin,
    checked_value,
    graph_waits_on_author,
    origin_of,
    pending_record,
)
from sidecar.runtime.lanes import Lanes
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.recovery import answer_uncertain, close_as_uncertain, recover_after_crash
from sidecar.runtime.titles import name_untitled
from sidecar.store import Store
from sidecar.store.records import question_id
from sidecar.store.uncertain import journal_key

if TYPE_CHECKING:
    from sidecar.turn.compiled import CompiledTurn

log = logging.getLogger(__name__)

ABANDONED = "No result: the author started a new message before this call finished."
RunEndListener = Callable[[str, str, Any], None]


class QuestionPolicy(Protocol):
    """What becomes of a run's questions before anyone hears of them: a run nobody may be
    watching answers them by its own policy (`sidecar.runtime.unattended`)."""

    def asking(self, thread_id: str, run_id: str, interrupt_id: str, kind: str) -> bool:
        """A live question is about to be asked; False drops it unasked."""
        ...

    def ended(self, thread_id: str, run_id: str, end: RunEnd) -> RunEnd:
        """The run ended, nothing of its end sent yet (the thread still busy): how it ends."""
        ...


class RunManager:
    """Owns the running turns. The compiled graph and saver come from `graph_factory`, built on
    first use so that start-up does not pay for importing LangGraph. `live` (optional) carries
    the interrupts MCP servers raise during a call; without it they find nobody to ask."""

    def __init__(
        self,
        store: Store,
        sink: EventSink,
        graph_factory: Callable[[], Awaitable[CompiledTurn]],
        live: LiveInterrupts | None = None,
        profiles: Callable[[], dict[str, Profile]] | None = None,
        *,
        lanes: Lanes | None = None,
    ) -> None:
        self.lanes = lanes or Lanes()
        self._run_ids: dict[str, str] = {}
        self._end_listeners: list[RunEndListener] = []
        self._profiles = profiles or (lambda: {p.id: p for p in DEFAULT_PROFILES})
        self._store = store
        self._live = live
        self._sink = sink
        self._graph_factory = graph_factory
        self._graph: CompiledTurn | None = None
        self._graph_lock = asyncio.Lock()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._questions: QuestionPolicy | None = None

    def is_busy(self, thread_id: str) -> bool:
        return thread_id in self._tasks

    def current_run(self, thread_id: str) -> str | None:
        """The id of the thread's running turn, if any."""
        return self._run_ids.get(thread_id) if thread_id in self._tasks else None

    def add_end_listener(self, listener: RunEndListener) -> None:
        """Called with (thread_id, run_id, terminal event) once a run has ended and its
        thread is free again (the queue starts the next turn from here)."""
        self._end_listeners.append(listener)

    def set_question_policy(self, policy: QuestionPolicy) -> None:
        """Let `policy` decide about every run's questions (live ones too) before they are
        sent."""
        self._questions = policy
        if self._live is not None:
            self._live.set_ask_hook(policy.asking)

    def recover_after_crash(self) -> None:
        """Runs left 'running' by a killed sidecar become failed turns that `retry` continues,
        or turns waiting on the author's decision about a call that may have run."""
        recover_after_crash(self._store)

    async def start(
        self,
        thread_id: str,
        text: str,
        *,
        lane: str = "main",
        delivered: Callable[[str], None] | None = None,
    ) -> str:
        """Start a turn with `text`; `delivered(run_id)` (the queue marking the messages the
        turn carries) runs in the transaction that writes the author's message.

        Raises:
            ThreadNotFoundError, ThreadBusyError.
        """
        self._store.get_thread(thread_id)
        self._ensure_idle(thread_id)
        graph, saver = await self.compiled()
        self._ensure_idle(thread_id)
        await self._abandon_unfinished(thread_id, saver)
        turn_id = uuid.uuid4().hex
        run_id = uuid.uuid4().hex
        with self._store.transaction():
            self._store.add_message(thread_id, "user", text, message_id=question_id(turn_id))
            if delivered is not None:
                delivered(run_id)
        graph_input = {
            "thread_id": thread_id,
            "turn_id": turn_id,
            "text": text,
            "direct": is_command(text),
        }
        return self._launch(
            thread_id,
            "start",
            graph,
            saver,
            graph_input,
            resumed=False,
            run_id=run_id,
            lane=lane,
            names_from=text,
        )

    async def resume(self, thread_id: str, interrupt_id: str, value: dict[str, Any]) -> str:
        """Answer any pending interrupt of the thread: the one resume path (see
        `sidecar.runtime.interrupts` for the origins and what an answer does in each).

        Raises:
            ThreadNotFoundError, ThreadBusyError, NoSuchInterruptError, InvalidResumeValueError.

        A live interrupt (raised during a tool call of the running turn) is answered in place:
        the returned id is the running turn's."""
        self._store.get_thread(thread_id)
        if self._live is not None and self._live.owns(interrupt_id):
            return self._live.resolve(thread_id, interrupt_id, value)
        self._ensure_idle(thread_id)
        pending_record(self._store, thread_id, interrupt_id)
        graph, saver = await self.compiled()
        # From here to the launch nothing awaits, and the thread and the question are checked
        # again after the await: of two answers (the author's, an unattended run's deadline)
        # the first wins and the other finds the thread busy or the question answered.
        self._ensure_idle(thread_id)
        record = pending_record(self._store, thread_id, interrupt_id)
        graph_input: Any = None
        if origin_of(self._store, record) is Origin.UNCERTAIN:
            question = self._store.uncertain_question(interrupt_id)
            assert question is not None
            answer_uncertain(self._store, question, value)
        else:
            checked = checked_value(record.kind, value)
            if record.kind == "plan_approval":
                self._check_plan_edit(record.payload, checked)
            from langgraph.types import Command

            if not self._store.answer_interrupt(interrupt_id, checked):
                raise NoSuchInterruptError(interrupt_id)
            graph_input = Command(resume={interrupt_id: checked})
        return self._launch(thread_id, "resume", graph, saver, graph_input, resumed=True)

    async def retry(self, thread_id: str) -> str:
        """Continue a failed, cancelled or crashed turn from its last checkpoint.

        Raises:
            ThreadNotFoundError, ThreadBusyError, NothingToResumeError.
        """
        self._store.get_thread(thread_id)
        self._ensure_idle(thread_id)
        graph, saver = await self.compiled()
        snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
        # Not `snapshot.interrupts`: after a crash it still lists a question already answered.
        if not snapshot.next or graph_waits_on_author(self._store, thread_id):
            raise NothingToResumeError(thread_id)
        return self._launch(thread_id, "retry", graph, saver, None, resumed=True)

    async def continue_plan(self, thread_id: str, plan_id: str, call: dict[str, Any]) -> str:
        """Run a plan's open tasks again in a new run (after `task/retry` on an idle thread);
        its result goes to the conversation as the answer of that run.

        Raises:
            ThreadNotFoundError, ThreadBusyError.
        """
        self._store.get_thread(thread_id)
        self._ensure_idle(thread_id)
        graph, saver = await self.compiled()
        await self._abandon_unfinished(thread_id, saver)
        graph_input = {
            "thread_id": thread_id,
            "turn_id": uuid.uuid4().hex,
            "text": "",
            "direct": True,
            "dispatching": plan_id,
            "dispatch_phase": "start",
            "plan_call": call,
        }
        return self._launch(thread_id, "retry", graph, saver, graph_input, resumed=False)

    def _check_plan_edit(self, payload: dict[str, Any], value: dict[str, Any]) -> None:
        """The author's edited tasks must make a valid plan, or the dialog says why."""
        if value.get("decision") != "approve" or not value.get("tasks"):
            return
        try:
            validate_edit(self._store, self._profiles(), str(payload["plan_id"]), value["tasks"])
        except PlanError as exc:
            raise InvalidResumeValueError(str(exc)) from exc

    async def cancel(self, thread_id: str) -> bool:
        """Cancel the running turn and wait until it has stopped; False if none was running."""
        task = self._tasks.get(thread_id)
        if task is None:
            return False
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        return True

    async def forget(self, thread_id: str, sub_threads: tuple[str, ...] = ()) -> None:
        """Drop the thread's checkpoints and its sub-threads' (after the thread was deleted)."""
        await self.cancel(thread_id)
        _graph, saver = await self.compiled()
        for tid in (thread_id, *sub_threads):
            await saver.adelete_thread(tid)

    async def shutdown(self) -> None:
        for thread_id in list(self._tasks):
            await self.cancel(thread_id)

    def _ensure_idle(self, thread_id: str) -> None:
        if thread_id in self._tasks:
            raise ThreadBusyError(thread_id)

    async def compiled(self) -> CompiledTurn:
        """The compiled graph and its saver, built on first use."""
        async with self._graph_lock:
            graph = self._graph
            if graph is None:
                graph = self._graph = await self._graph_factory()
            return graph

    async def _abandon_unfinished(self, thread_id: str, saver: Any) -> None:
        """A new message closes whatever the last turn left open, so no call in the
        conversation stays without a result."""
        for call in self._store.unanswered_tool_calls(thread_id):
            text, is_error = self._unfinished_result(thread_id, call.id)
            self._store.add_message(
                thread_id,
                "tool",
                text,
                message_id=f"{call.id}:result",
                tool_call_id=call.id,
                is_error=is_error,
            )
        self._store.drop_pending_interrupts(thread_id)
        await saver.adelete_thread(thread_id)

    def _unfinished_result(self, thread_id: str, call_id: str) -> tuple[str, bool]:
        """What the conversation records for a call the last turn left without a result: the
        journal's result if it ran, "uncertain" if it may have run, else "not run"."""
        key = journal_key(thread_id, call_id)
        entry = self._store.journal_entry(key)
        if entry is None:
            return ABANDONED, True
        if entry.result is not None:
            return str(entry.result.get("text", "")), bool(entry.result.get("is_error"))
        return close_as_uncertain(self._store, key), True

    def _launch(
        self,
        thread_id: str,
        kind: str,
        graph: Any,
        saver: Any,
        graph_input: Any,
        *,
        resumed: bool,
        run_id: str | None = None,
        lane: str = "main",
        names_from: str | None = None,
    ) -> str:
        """Start the run's task. `names_from`: the author's message of a turn it starts, which
        names the thread when the run ends if it is still untitled (`runtime.titles`)."""
        run_id = run_id or uuid.uuid4().hex
        self._store.create_run(run_id, thread_id, kind)
        self._store.set_thread_status(thread_id, "running")
        emitter = RunEmitter(self._store, self._sink, run_id, thread_id)
        live = self._live
        binding = live.binding(emitter) if live is not None else None

        async def run() -> None:
            try:
                with bind_run(binding):
                    end = await self._in_lane(
                        lane, emitter, graph, saver, graph_input, resumed=resumed
                    )
                end = self._policed(thread_id, run_id, end)
            finally:
                self._tasks.pop(thread_id, None)
                if live is not None:
                    live.end_run(run_id)
            if names_from is not None:
                self._name_thread(emitter, names_from)
            # Only now, with the thread free, do its questions and its end reach the wire.
            for event in end.events():
                emitter(event)
            for listener in self._end_listeners:
                try:
                    listener(thread_id, run_id, end.final)
                except Exception:  # a listener's failure must not lose the run's end
                    log.exception("run end listener failed for %s", run_id)

        self._run_ids[thread_id] = run_id
        self._tasks[thread_id] = asyncio.create_task(run(), name=f"run:{run_id}")
        return run_id

    def _policed(self, thread_id: str, run_id: str, end: RunEnd) -> RunEnd:
        if self._questions is None:
            return end
        try:
            return self._questions.ended(thread_id, run_id, end)
        except Exception:  # a policy's failure must not lose the run's end
            log.exception("question policy failed for %s", run_id)
            return end

    def _name_thread(self, emitter: RunEmitter, text: str) -> None:
        """Title an untitled thread after the author's message; tell the window before the
        run's end."""
        try:
            title = name_untitled(self._store, emitter.thread_id, text)
        except Exception:  # a title is a nicety: failing to write it must not lose the run's end
            log.exception("naming thread %s failed", emitter.thread_id)
            return
        if title is not None:
            emitter(ThreadRenamed(title=title))

    async def _in_lane(
        self,
        lane: str,
        emitter: RunEmitter,
        graph: Any,
        saver: Any,
        graph_input: Any,
        *,
        resumed: bool,
    ) -> RunEnd:
        """Drive the run once its lane has a free slot (cancel while waiting ends it cancelled)."""
        try:
            async with self.lanes.slot(lane):
                return await drive(graph, saver, self._store, emitter, graph_input, resumed=resumed)
        except asyncio.CancelledError:
            self._store.end_run(emitter.run_id, "cancelled")
            self._store.set_thread_status(emitter.thread_id, "cancelled")
            return RunEnd(RunCancelled())
