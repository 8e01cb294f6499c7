"""Events the nodes stream to the runtime (plain dicts on LangGraph's custom stream).

The runtime turns them into wire events; the graph itself knows nothing of the protocol.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Any, Protocol

from langgraph.config import get_stream_writer

from sidecar.store.records import MessageRecord


class Node(Protocol):
    """A graph node: takes the state, returns the update."""

    def __call__(self, state: Any) -> Awaitable[dict[str, Any]]: ...


def emit(event_type: str, **fields: Any) -> None:
    get_stream_writer()({"type": event_type, **fields})


def emit_message(record: MessageRecord) -> None:
    emit("message", message=record)


def traced(name: str, fn: Node) -> Node:
    """Wrap a node so it reports node_started / node_finished."""

    @functools.wraps(fn)
    async def wrapper(state: Any) -> dict[str, Any]:
        emit("node_started", node=name)
        update = await fn(state)
        emit("node_finished", node=name)
        return update

    return wrapper
