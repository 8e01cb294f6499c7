"""After a crash: every question the author saw stays answerable, and no call runs twice.

A killed sidecar leaves runs marked `running`. Their graph interrupts cannot be among what is
lost: `drive` commits an interrupt's record together with the run's end before the window hears
of it. What can be open is a call that was in flight:

- a write with a journal intent and no result may have run, in part or in full. It becomes a
  new pending question, "this may have run: mark as done / run again / skip", with what the
  journal knows and any question the call's server had asked meanwhile. The thread waits on it
  (`interrupted`); the answer goes to the journal and the turn continues from its checkpoint;
- a question a server or a subagent raised during a call (live) can no longer reach the call,
  which died with the process. It is folded into the call's new question when the call was a
  write; otherwise the thread's error names it, and `run/retry` runs the (read-only) call again,
  which asks again.

A new author message instead closes such a call as uncertain in the conversation, never as
"not run".
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import ValidationError

from mcp_servers.field_errors import describe
from sidecar.host.types import ToolOutcome
from sidecar.protocol import QuestionValue
from sidecar.runtime.errors import InvalidResumeValueError
from sidecar.store import InterruptRecord, Store
from sidecar.store.uncertain import Decision, OpenIntent, UncertainQuestion
from sidecar.turn.questions import AuthorQuestion

CRASHED = "The sidecar stopped during this run."
CHOICES: dict[str, Decision] = {
    "Mark as done": "mark_done",
    "Run again": "run_again",
    "Skip": "skip",
}
MARKED_DONE = (
    "Marked as done by the author: it ran before the sidecar stopped; its output was not recorded."
)
SKIPPED = "Skipped by the author: it may have run before the sidecar stopped; it was not run again."
UNCERTAIN = (
    "Uncertain: this call may have run before the sidecar stopped (its result is unknown); the "
    "author started a new message instead of deciding."
)
_ARGUMENTS_SHOWN = 600


PLAN_RUN = "plan"
"""The `kind` of a background plan's run (`sidecar.runtime.team`): it is no turn of its thread,
so a crash leaves the thread as it was; the plan is taken up again at start-up."""


def recover_after_crash(store: Store) -> None:
    """Close every run a killed sidecar left `running` (see the module docstring)."""
    for run in store.runs_in_status("running"):
        with store.transaction():
            if run.kind == PLAN_RUN:
                _recover_plan_run(store, run.id, run.thread_id)
            else:
                _recover_run(store, run.id, run.thread_id)


def _recover_plan_run(store: Store, run_id: str, thread_id: str) -> None:
    """A background plan's run: its questions are dropped (its tasks ask again when the plan
    is taken up), and the thread's own status stays what its turns made it."""
    store.end_run(run_id, "failed", CRASHED)
    for record in store.pending_interrupts(thread_id):
        if record.run_id == run_id:
            store.drop_interrupt(record.id)


def _recover_run(store: Store, run_id: str, thread_id: str) -> None:
    store.end_run(run_id, "failed", CRASHED)
    live = [i for i in store.pending_interrupts(thread_id) if i.run_id == run_id]
    asked = 0
    # A subagent's calls are journaled under its sub-thread; the author answers on the thread.
    intents = [i for t in (thread_id, *store.sub_threads(thread_id)) for i in store.open_intents(t)]
    for intent in intents:
        if store.pending_uncertain_question(intent.key) is None:
            seen = [i for i in live if i.payload.get("call_id") == intent.call_id]
            ask_uncertain(store, intent, run_id, seen, on_thread=thread_id)
        asked += 1
    open_calls = {i.call_id for i in intents}
    folded = {i.id for i in live if i.payload.get("call_id") in open_calls}
    for record in live:
        store.drop_interrupt(record.id)
    if asked:
        store.set_thread_status(thread_id, "interrupted")
        return
    unanswered = [i for i in live if i.id not in folded]
    note = CRASHED
    if unanswered:
        titles = "; ".join(f"“{i.payload.get('title', i.kind)}”" for i in unanswered)
        note += f" It was asking: {titles}. Retry runs the call again, and it asks again."
    store.set_thread_status(thread_id, "failed", note)


def ask_uncertain(
    store: Store,
    intent: OpenIntent,
    run_id: str | None,
    seen: list[InterruptRecord],
    *,
    on_thread: str | None = None,
) -> str:
    """Record a new pending question about a call that may have run, on `on_thread` (default:
    the call's own thread); returns its id."""
    interrupt_id = uuid.uuid4().hex
    payload = uncertain_payload(intent, seen)
    thread_id = on_thread or intent.thread_id
    store.save_interrupt(interrupt_id, thread_id, run_id, "question", payload)
    store.link_uncertain(interrupt_id, intent)
    return interrupt_id


def uncertain_payload(intent: OpenIntent, seen: list[InterruptRecord]) -> AuthorQuestion:
    """A `question` interrupt with what the journal knows about the call."""
    arguments = json.dumps(intent.arguments, ensure_ascii=False, sort_keys=True)
    if len(arguments) > _ARGUMENTS_SHOWN:
        arguments = arguments[:_ARGUMENTS_SHOWN] + "…"
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(intent.created_at))
    body = (
        f"The sidecar stopped while {intent.server} was running {intent.tool}, so it may have "
        f"run, in part or in full. The journal recorded its start at {started} and no result.\n"
        f"Arguments: {arguments}"
    )
    for record in seen:
        body += f"\nWhile it ran, it asked you: “{record.payload.get('title', record.kind)}”."
    return {
        "kind": "question",
        "title": f"Did {intent.server}__{intent.tool} run?",
        "body": body,
        "question": "Mark it as done (it ran), run it again, or skip it?",
        "choices": list(CHOICES),
    }


def answer_uncertain(
    store: Store, question: UncertainQuestion, value: dict[str, Any]
) -> dict[str, Any]:
    """Write the author's decision about a call that may have run; returns the checked value.

    Raises:
        InvalidResumeValueError: the value is not one of the choices.
    """
    try:
        checked = QuestionValue.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        raise InvalidResumeValueError(describe(exc)) from exc
    answer = str(checked["answer"])
    decision: Decision | None = CHOICES.get(answer)
    if decision is None:
        decision = next((d for d in CHOICES.values() if d == answer), None)
    if decision is None:
        raise InvalidResumeValueError(f"answer one of {', '.join(CHOICES)}")
    outcome = None
    if decision == "mark_done":
        outcome = ToolOutcome(is_error=False, text=MARKED_DONE).to_json()
    elif decision == "skip":
        outcome = ToolOutcome(is_error=True, text=SKIPPED).to_json()
    with store.transaction():
        store.answer_interrupt(question.interrupt_id, checked)
        store.decide_uncertain(question.interrupt_id, decision, outcome)
    return checked


def close_as_uncertain(store: Store, key: str) -> str:
    """A new message leaves an open call undecided: journal and conversation say so."""
    store.close_intent(key, ToolOutcome(is_error=True, text=UNCERTAIN).to_json())
    return UNCERTAIN
