"""A message to a running task, from the main agent (`atrium__task_message`), from the author
(`task/message`, the run tree), or from a sibling task of the same plan (`atrium__team_note`: an
observation it should know, or a question it may answer with a note of its own, `reply_to` the
question).

The message is an envelope addressed to the task, kept in the outbox with `reply_to` the call or
request that sent it. An internal subagent reads it before its next step (`take_messages`, which
writes it into its sub-thread and acknowledges it, once). Claude Code takes it through its
stream-json input as its next turn (the agents server's `agent_message`, to the run working on
the task; the envelope is acknowledged once the server wrote it). Codex and OpenClaw take no
input while they run: the message is refused with the way on (cancel and run again with it).
"""

from __future__ import annotations

from typing import Any

from sidecar.host.types import ToolOutcome
from sidecar.llm.types import ToolSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.envelope import agent_id
from sidecar.plans.profiles import AGENTS_SERVER
from sidecar.store import TaskRecord
from sidecar.turn.state import AgentIdentity, ChatEntry

Sender = str
"""Who sent it, as its reader is told: `the author`, `the main agent`, `task <id>`."""
NOTE_TOOL = "atrium__team_note"
_WAY_ON = (
    "cancel it (atrium__task_cancel, or Cancel in the run tree) and revise the plan "
    "(atrium__plan with plan_id={plan!r}) with a task that includes the message."
)


_READ = frozenset({"message", "observation", "question"})
"""The envelopes a subagent reads before its next step (a handoff to itself is a record)."""
_WHO = {"author": "the author", "main agent": "the main agent"}


class MessageRefused(Exception):
    """The task cannot take the message; the text says why and what to do instead."""


async def send_to_task(
    deps: PlanDeps,
    thread_id: str,
    task: TaskRecord,
    text: str,
    *,
    message_id: str,
    sender: Sender,
) -> str:
    """Deliver `text` to the running `task`; returns how it will be read, in a sentence.

    Raises:
        MessageRefused: the task has ended, its profile is gone, or its agent takes no input.
    """
    if not text.strip():
        raise MessageRefused("the message is empty")
    if task.final:
        raise MessageRefused(f"task {task.id} has ended ({task.status}); it reads no more messages")
    profile = deps.profiles().get(task.profile)
    if profile is None:
        raise MessageRefused(f"task {task.id}'s profile {task.profile!r} is not configured")
    payload = {"text": text, "from": _WHO.get(sender, sender)}
    if profile.kind == "claude_code":
        await _to_claude(deps, task, text)
        payload["delivery"] = "stdin"
    elif profile.kind != "internal":
        raise MessageRefused(
            f"task {task.id} runs {profile.name}, whose CLI takes no input while it works. To "
            f"change course, {_WAY_ON.format(plan=task.plan_id)}"
        )
    store = deps.store
    envelope_id = f"{message_id}:message"
    with store.transaction():
        store.put_envelope(
            envelope_id,
            thread_id,
            sender=agent_id(thread_id),
            receiver=agent_id(thread_id, task.id),
            kind="message",
            payload=payload,
            plan_id=task.plan_id,
            task_id=task.id,
            reply_to=message_id,
        )
        if profile.kind == "claude_code":
            store.ack_envelope(envelope_id)  # delivered: the agents server wrote it to the CLI
    if profile.kind == "claude_code":
        return (
            f"Sent to task {task.id}: Claude Code takes the message as its next turn, once the "
            "turn it is in ends."
        )
    return f"Sent to task {task.id}: it reads the message before its next step."


async def _to_claude(deps: PlanDeps, task: TaskRecord, text: str) -> None:
    run_id = deps.coordinator.agent_run(task.plan_id, task.id)
    if run_id is None:
        raise MessageRefused(
            f"task {task.id} has no Claude Code run going right now ({task.status}); send it "
            f"once it runs, or {_WAY_ON.format(plan=task.plan_id)}"
        )
    sent = await deps.host.call(
        f"{AGENTS_SERVER}__agent_message", {"run_id": run_id, "text": text}, None
    )
    if sent.is_error:
        raise MessageRefused(f"Claude Code did not take the message: {sent.text}")


def take_messages(deps: PlanDeps, parent_thread_id: str, task_id: str, sub: str) -> list[ChatEntry]:
    """The messages sent to a running internal subagent's task, delivered now: written to its
    sub-thread's conversation and acknowledged in one transaction (a crash in between delivers
    them once, on the step after)."""
    store = deps.store
    waiting = [
        e for e in store.envelopes_for(agent_id(parent_thread_id, task_id)) if e.kind in _READ
    ]
    if not waiting:
        return []
    entries: list[ChatEntry] = []
    with store.transaction():
        for envelope in waiting:
            sender = str(envelope.payload.get("from", "main agent"))
            who = _WHO.get(sender, sender)
            what = "Message" if envelope.kind == "message" else envelope.kind.capitalize()
            reply = f" (reply with note id {envelope.id})" if envelope.kind == "question" else ""
            text = f"[{what} from {who}{reply}] {envelope.payload.get('text', '')}"
            store.add_message(sub, "user", text, message_id=f"envelope:{envelope.id}")
            store.ack_envelope(envelope.id)
            entries.append({"role": "user", "content": text})
    return entries


def note_spec() -> ToolSpec:
    """The tool a subagent tells or asks a sibling task of its plan with."""
    return ToolSpec(
        NOTE_TOOL,
        "Tell another task of your plan something it should know (kind observation), or ask "
        "it (kind question; its answer comes back to you as a note). It reads it before its "
        "next step. To answer a question, pass its note id as reply_to.",
        {
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "The other task's id."},
                "kind": {"type": "string", "enum": ["observation", "question"]},
                "text": {"type": "string"},
                "reply_to": {"type": "string", "description": "The note this answers."},
            },
            "required": ["to", "kind", "text"],
        },
    )


def post_note(
    deps: PlanDeps, agent: AgentIdentity, call_id: str, arguments: dict[str, Any]
) -> ToolOutcome:
    """A subagent's note to a sibling task (an internal one that is still open), through the
    outbox; its answer, if any, comes back the same way."""
    store = deps.store
    parent, plan_id, own = agent["parent_thread_id"], agent["plan_id"], agent["task_id"]
    to, kind, text = arguments.get("to"), arguments.get("kind"), arguments.get("text")
    if kind not in ("observation", "question") or not isinstance(text, str) or not text.strip():
        return ToolOutcome(is_error=True, text="kind must be observation or question, with text")
    sibling = store.get_task(plan_id, to) if isinstance(to, str) and to != own else None
    if sibling is None:
        others = ", ".join(t.id for t in store.tasks(plan_id) if t.id != own) or "none"
        return ToolOutcome(is_error=True, text=f"no other task {to!r} in your plan ({others})")
    profile = deps.profiles().get(sibling.profile)
    if sibling.final or profile is None or profile.kind != "internal":
        why = f"has ended ({sibling.status})" if sibling.final else "reads no notes"
        return ToolOutcome(is_error=True, text=f"task {sibling.id} {why}")
    reply_to = arguments.get("reply_to")
    store.put_envelope(
        f"{call_id}:{kind}",
        parent,
        sender=agent_id(parent, own),
        receiver=agent_id(parent, sibling.id),
        kind=kind,
        payload={"text": text, "from": f"task {own}"},
        plan_id=plan_id,
        task_id=sibling.id,
        reply_to=reply_to if isinstance(reply_to, str) and reply_to else call_id,
    )
    return ToolOutcome(
        is_error=False, text=f"Task {sibling.id} reads your {kind} before its next step."
    )
