"""The client under test for the conformance suite's client scenarios: Atrium's MCP host, driven
through a real sidecar over its own JSON-RPC wire, as the window drives it.

The suite runs a command once per scenario with the scenario server's URL as its last argument,
the scenario's name in `MCP_CONFORMANCE_SCENARIO` and, for some, its data in
`MCP_CONFORMANCE_CONTEXT`. `run_scenario` is what happens then: the scenario's server is added
as the author would add it (`server/add`, a streamable-HTTP entry), the host connects, and tools
are called with `/call` from a new thread as the author would call them: the calls the context
names, else every tool the server offers, with arguments made from each tool's input schema. It
answers what the window would ask the author: an approval with "allow once", a form by
submitting it as it opens (nothing filled in), a sampling request with "deny". Then the server
is removed. It knows no scenario by name: what the suite sees is the host's own behaviour.

`python -m tests.conformance.client <server-url>` does it on a sidecar of its own (to try one
scenario by hand); `python -m tests.conformance` runs every scenario on one long-lived sidecar,
through `tests.conformance.relay`.

Exit status: 0 when the host connected and every call ended (a tool's error result included),
1 when the server never connected or a run failed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

from sidecar.protocol import TERMINAL_EVENT_TYPES, InterruptEvent, RunEventParams
from tests.e2e.harness import Sidecar

SERVER = "conformance"
"""The server's name when this module runs a scenario on a sidecar of its own."""
CONNECT_WITHIN_S = 20.0
RUN_WITHIN_S = 60.0
CONNECTED = frozenset({"ready", "degraded"})
NOT_CONNECTED = frozenset({"crashed", "backoff", "stopped"})


def example_value(schema: dict[str, Any]) -> object:
    """A value the schema accepts, as simple as it gets: its default, const or first choice,
    else a plain value of its type."""
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    choices = schema.get("enum") or schema.get("examples")
    if isinstance(choices, list) and choices:
        return cast(list[object], choices)[0]
    kind = schema.get("type")
    kind = cast(list[object], kind)[0] if isinstance(kind, list) and kind else kind
    simple: dict[object, object] = {"string": "x", "integer": 1, "number": 1, "boolean": True}
    if kind in simple:
        return simple[kind]
    if kind == "array":
        return []
    return example_arguments(schema) if kind == "object" else None


def example_arguments(schema: dict[str, Any]) -> dict[str, object]:
    """Arguments for a tool with this input schema: every required property."""
    properties = cast(dict[str, dict[str, Any]], schema.get("properties") or {})
    required = cast(list[str], schema.get("required") or [])
    return {name: example_value(properties.get(name, {})) for name in required}


def planned_calls(tools: list[dict[str, Any]], context: dict[str, Any]) -> list[tuple[str, Any]]:
    """(tool, arguments) to call: the context's `toolCalls`, else every tool offered."""
    named = context.get("toolCalls")
    if isinstance(named, list):
        calls = cast(list[dict[str, Any]], named)
        return [(str(c["name"]), c.get("arguments") or {}) for c in calls]
    return [(str(t["tool"]), example_arguments(t["input_schema"])) for t in tools]


def _answer(event: InterruptEvent) -> dict[str, Any]:
    """What the author gives in the window: allow once; submit the form as it opens; deny."""
    kind = event.interrupt.kind
    if kind == "approval":
        return {"decision": "allow_once"}
    if kind == "form":
        return {"action": "accept", "content": {}}
    return {"decision": "deny"}


async def run_call(
    sidecar: Sidecar, thread_id: str, server: str, tool: str, arguments: Any
) -> bool:
    """`/call` one tool and answer every question on the way; whether the run ended cleanly."""
    text = f"/call {server}__{tool} {json.dumps(arguments)}"
    started = await sidecar.call("run/start", {"thread_id": thread_id, "text": text})
    run_id = str(started["run_id"])
    answered: set[str] = set()

    def unanswered(event: RunEventParams) -> bool:
        body = event.event
        return isinstance(body, InterruptEvent) and body.interrupt.id not in answered

    while True:

        def next_step(events: list[RunEventParams], run: str = run_id) -> bool:
            return any(
                e.run_id == run and (e.event.type in TERMINAL_EVENT_TYPES or unanswered(e))
                for e in events
            )

        await sidecar.wait_for(next_step, RUN_WITHIN_S)
        events = sidecar.run_events(run_id)
        asked = [
            e.event
            for e in events
            if isinstance(e.event, InterruptEvent) and e.event.interrupt.id not in answered
        ]
        if not asked:
            return events[-1].event.type == "run_finished"
        question = asked[0]
        answered.add(question.interrupt.id)
        params = {
            "thread_id": thread_id,
            "interrupt_id": question.interrupt.id,
            "value": _answer(question),
        }
        resumed = await sidecar.call("run/resume", params)
        run_id = str(resumed["run_id"])


async def connect(sidecar: Sidecar, server: str, url: str) -> bool:
    """Add the scenario's server as the author would; whether the host connected to it."""
    await sidecar.call("server/add", {"config": {"name": server, "url": url}})

    def settled(frame: dict[str, Any]) -> bool:
        if frame.get("method") != "server/status":
            return False
        status = frame["params"]["server"]
        return status["name"] == server and status["state"] in CONNECTED | NOT_CONNECTED

    try:
        frame = await sidecar.wait_frame(settled, CONNECT_WITHIN_S)
    except TimeoutError:
        return False
    return frame["params"]["server"]["state"] in CONNECTED


async def run_scenario(sidecar: Sidecar, server: str, url: str, context: dict[str, Any]) -> int:
    """One scenario on `sidecar`, its server added as `server` (a name not used before) and
    removed at the end; the exit status (see the module docstring)."""
    try:
        if not await connect(sidecar, server, url):
            return 1
        listed = await sidecar.call("tool/list")
        tools = [t for t in listed["tools"] if t["server"] == server]
        thread = await sidecar.call("thread/create", {"title": server})
        ended = [
            await run_call(sidecar, thread["id"], server, tool, arguments)
            for tool, arguments in planned_calls(tools, context)
        ]
        return 0 if all(ended) else 1
    finally:
        await sidecar.call("server/remove", {"name": server})


async def start_sidecar(folder: Path) -> Sidecar:
    """A sidecar on a fresh data folder and workspace under `folder`."""
    (folder / "data").mkdir(parents=True)
    (folder / "workspace").mkdir()
    return await Sidecar.start(folder / "data", folder / "workspace")


async def drive(url: str, context: dict[str, Any], folder: Path) -> int:
    sidecar = await start_sidecar(folder)
    try:
        return await run_scenario(sidecar, SERVER, url, context)
    finally:
        await sidecar.kill()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m tests.conformance.client <server-url>", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="atrium-conformance-") as folder:
        return asyncio.run(drive(argv[-1], context, Path(folder)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
