"""`tool_search`: the tool definitions one model request carries with a server of 301 tools.

The real sidecar with the 301-tool MCP server of the tests (`tests/e2e/many_tools_server.py`,
~166 KB of definitions) and a scripted model (127.0.0.1) that searches for a tool, calls what
it found (allowed once), then answers. Run twice in the same run: with tool search (the
default: past 10% of the window only some definitions go) and with every tool sent (the share
raised to the whole window, `ATRIUM_TOOL_SEARCH_SHARE=1`). Each request's tool definitions are
measured in bytes (JSON, as sent) and in the model's own tokens (tiktoken's o200k).
Target: with tool search, every request's definitions ≤ 10% of the model's window (128k tokens
for gpt-4o-mini), and the tool asked for is found, called and run.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, say, show
from sidecar.context.tokens import load_counter
from tests.e2e.many_tools_server import TARGET
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply
from tests.fakes.openai_chat import openai_chat_server

NAME = "tool_search"
MODEL = "openai/gpt-4o-mini"
WINDOW = 128_000
TARGET_SHARE = 0.10
SERVER = Path(__file__).resolve().parents[1] / "tests" / "e2e" / "many_tools_server.py"
FOUND = f"suite__{TARGET}"
SUITE_TOOLS = 301
READY_S = 120


@dataclass(frozen=True, slots=True)
class Request:
    """One model request's tool definitions."""

    tools: int
    bytes: int
    tokens: int

    @property
    def share(self) -> float:
        return self.tokens / WINDOW

    def text(self) -> str:
        return (
            f"{self.tools} tools, {self.bytes:,} bytes, {self.tokens:,} tokens "
            f"({self.share:.1%} of the window)"
        )


@dataclass(frozen=True, slots=True)
class Session:
    requests: tuple[Request, ...]
    found_first: bool
    ran: bool


def _measure(request: RecordedRequest) -> Request:
    tools: list[dict[str, Any]] = request.body.get("tools") or []
    text = json.dumps(tools)
    return Request(len(tools), len(text.encode()), load_counter(MODEL).count(text))


async def _suite_ready(client: LineClient) -> None:
    """Until the suite's tools are listed (`tool/list` waits a while for starting servers)."""
    async with asyncio.timeout(READY_S):
        while True:
            listed = (await client.call("tool/list"))["tools"]
            if sum(t["server"] == "suite" for t in listed) >= SUITE_TOOLS:
                return


async def _session(root: Path, share: str | None) -> Session:
    """One sidecar, one turn: search, call what was found (allowed once), answer."""
    data = root / "data"
    data.mkdir(parents=True)
    config = {"mcpServers": {"suite": {"command": sys.executable, "args": [str(SERVER)]}}}
    (data / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    script = [
        Reply.tool_call("atrium__tool_search", {"query": "reconcile bank statement"}),
        Reply.tool_call(FOUND, {"statement_month": "2026-09"}),
        Reply.text(answer_text("September is reconciled.")),
    ]
    with openai_chat_server(script) as model:
        extra = {"ATRIUM_TOOL_SEARCH_SHARE": share} if share else {}
        env = sidecar_env(
            data,
            make_workspace(root / "ws"),
            ATRIUM_MODEL=MODEL,
            ATRIUM_MODEL_API_BASE=model.url + "/v1",
            ATRIUM_MODEL_API_KEY="x",
            **extra,
        )
        client = await LineClient.spawn(sidecar_argv(), env)
        try:
            await client.call("initialize", {"client_name": "bench"})
            await _suite_ready(client)
            thread = (await client.call("thread/create", {}))["id"]
            run = await client.call("run/start", {"thread_id": thread, "text": "Reconcile"})
            events = await client.run_to_end(run["run_id"])
            searched = [e for e in events if e["type"] == "tool_result"]
            [ask] = [e["interrupt"] for e in events if e["type"] == "interrupt"]
            resumed = await client.call(
                "run/resume",
                {
                    "thread_id": thread,
                    "interrupt_id": ask["id"],
                    "value": {"decision": "allow_once"},
                },
            )
            after = await client.run_to_end(resumed["run_id"])
            ran = [e for e in after if e["type"] == "tool_result"]
        finally:
            await client.close()
        found_first = bool(searched) and f"- {FOUND}(" in searched[0]["content"].splitlines()[1]
        done = bool(ran) and not ran[0]["is_error"] and TARGET in ran[0]["content"]
        requests = tuple(_measure(r) for r in model.generation_requests)
    return Session(requests, found_first, done)


async def run() -> list[Line]:
    say(f"[{NAME}] tool definitions per request, {SUITE_TOOLS}-tool server: search vs all sent")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        searched = await _session(root / "search", None)
        every = await _session(root / "all", "1")
    lines: list[Line] = []
    steps = ("before the search", "after the search", "after the call")
    for label, session in (("all tools sent", every), ("tool search", searched)):
        for step, request in zip(steps, session.requests, strict=False):
            lines.append(Figure(NAME, f"{label}, request {step}", request.text()))
    heaviest = max(searched.requests, key=lambda r: r.tokens)
    first_all = every.requests[0]
    lines.append(
        Figure(
            NAME,
            "tool search / all sent, first request",
            f"{searched.requests[0].bytes / first_all.bytes:.1%} of the bytes",
        )
    )
    lines.append(
        Figure(
            NAME,
            "tool asked for: found first, called, ran",
            "yes" if searched.found_first and searched.ran else "NO",
        )
    )
    lines.append(
        Target(NAME, "heaviest request's tools / window", heaviest.share, TARGET_SHARE, "%")
    )
    for line in lines:
        show(line)
    return lines


if __name__ == "__main__":
    asyncio.run(run())
