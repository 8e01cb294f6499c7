"""A thread exported as Markdown or JSON: its messages, its summaries, and each turn's tokens and
cost with the thread's totals."""

from __future__ import annotations

import json
import time
from typing import Any

from sidecar.store import Store
from sidecar.store.context import ContextRepo
from sidecar.store.records import MessageRecord, ThreadRecord

PAGE = 1000


def _messages(store: Store, thread_id: str) -> list[tuple[int, MessageRecord]]:
    found: list[tuple[int, MessageRecord]] = []
    after = 0
    while True:
        page = store.messages_page(thread_id, after_seq=after, limit=PAGE)
        found.extend(page.messages)
        if not page.has_newer or not page.messages:
            return found
        after = page.messages[-1][0]


def _usage(contexts: ContextRepo, thread_id: str) -> dict[str, Any]:
    turns = contexts.usage(thread_id)
    costs = [t.cost for t in turns if t.cost is not None]
    return {
        "turns": [
            {
                "turn_id": t.turn_id,
                "model": t.model,
                "prompt_tokens": t.prompt_tokens,
                "completion_tokens": t.completion_tokens,
                "cost": t.cost,
            }
            for t in turns
        ],
        "prompt_tokens": sum(t.prompt_tokens for t in turns),
        "completion_tokens": sum(t.completion_tokens for t in turns),
        "cost": sum(costs) if costs else None,
    }


def thread_json(store: Store, contexts: ContextRepo, thread: ThreadRecord) -> str:
    body = {
        "thread": {"id": thread.id, "title": thread.title, "created_at": thread.created_at},
        "messages": [
            {
                "seq": seq,
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "created_at": m.created_at,
                "tool_calls": [
                    {"id": c.id, "server": c.server, "tool": c.tool, "arguments": c.arguments}
                    for c in m.tool_calls
                ],
                "tool_call_id": m.tool_call_id,
                "is_error": m.is_error,
            }
            for seq, m in _messages(store, thread.id)
        ],
        "summaries": [
            {"from_seq": s.from_seq, "to_seq": s.to_seq, "messages": s.messages, "text": s.text}
            for s in contexts.summaries(thread.id)
        ],
        "usage": _usage(contexts, thread.id),
    }
    return json.dumps(body, ensure_ascii=False, indent=2)


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def thread_markdown(store: Store, contexts: ContextRepo, thread: ThreadRecord) -> str:
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(thread.created_at))
    lines = [f"# {thread.title}", "", f"Started {created}.", ""]
    for seq, message in _messages(store, thread.id):
        if message.tool_calls:
            calls = ", ".join(f"`{c.server}__{c.tool}`" for c in message.tool_calls)
            lines += [f"**Tool call** (#{seq}): {calls}", ""]
        elif message.role == "tool":
            marker = " (error)" if message.is_error else ""
            lines += [f"**Tool result**{marker} (#{seq}):", "", "```", message.content, "```", ""]
        else:
            who = {"user": "Author", "assistant": "Agent"}.get(message.role, message.role)
            lines += [f"**{who}** (#{seq}):", "", message.content, ""]
    usage = _usage(contexts, thread.id)
    lines += ["## Tokens and cost", "", "| turn | model | prompt | completion | cost |"]
    lines.append("|---|---|---|---|---|")
    for i, turn in enumerate(usage["turns"], start=1):
        lines.append(
            f"| {i} | {turn['model'] or ''} | {turn['prompt_tokens']} | "
            f"{turn['completion_tokens']} | {_cost(turn['cost'])} |"
        )
    lines.append(
        f"| total | | {usage['prompt_tokens']} | {usage['completion_tokens']} | "
        f"{_cost(usage['cost'])} |"
    )
    return "\n".join(lines) + "\n"
