"""OpenClaw: the first token the window sees through a Gateway, against an embedded turn's end.

The pinned OpenClaw (installed into .cache/peers on first use, see tests/setup/openclaw.py) answers
the same prompt from a scripted Chat Completions model on 127.0.0.1, a few times each way:

- Gateway mode: a Gateway on a free loopback port (started once, its start-up time printed apart),
  the controller speaking its WebSocket protocol; timed from `start()` to the first
  `message_delta` event, and to the run's end;
- embedded (`--local`): the CLI per turn; nothing streams, so the author sees the answer only at
  the end of the turn, timed from `start()` to the terminal event.

The ratio says how much sooner the author sees text in Gateway mode. No target: figures only.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import anyio

from bench._report import Figure, Line, ms, say, show, spread
from mcp_servers.agents.controllers import OpenClawConfig, OpenClawController
from mcp_servers.agents.controllers.openclaw_state import OpenClawModel, build_config
from mcp_servers.agents.events import Completed, Failed, MessageDelta
from mcp_servers.agents.requests import StartRequest, ToolPolicy
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.setup.openclaw import OpenClawInstall, OpenClawUnavailable, install_openclaw
from tests.setup.openclaw import openclaw_gateway as start_gateway

NAME = "agents"
TURNS = 3
PROMPT = "Summarise the chapter in one paragraph."
ANSWER = "The chapter follows the keeper of a lighthouse through one long winter night. " * 4


async def _turn(ctl: OpenClawController, work: Path) -> tuple[float | None, float, bool]:
    """(seconds to the first delta, seconds to the end, success) of one turn."""
    started = time.perf_counter()
    first: float | None = None
    await ctl.start(StartRequest(session_id="bench", working_dir=work, instruction=PROMPT))
    ok = False
    async for event in ctl.stream():
        if isinstance(event, MessageDelta) and first is None:
            first = time.perf_counter() - started
        if isinstance(event, Completed | Failed):
            ok = isinstance(event, Completed)
    return first, time.perf_counter() - started, ok


def _controller(
    install: OpenClawInstall, root: Path, server: ScriptedModelServer, **settings: object
) -> OpenClawController:
    model = OpenClawModel(
        api="openai-completions", base_url=server.url + "/v1", model_id="scripted", api_key="sk-x"
    )
    config = OpenClawConfig(
        executable=str(install.executable),
        model=model,
        state_root=root / "state",
        trace_dir=root / "traces",
        mode="local",
    ).model_copy(update=settings)
    return OpenClawController(config)


async def _measure(install: OpenClawInstall, root: Path) -> list[Line]:
    work = root / "work"
    work.mkdir()
    lines: list[Line] = []
    with openai_chat_server(fallback=Reply.text(ANSWER)) as server, ExitStack() as stack:
        embedded: list[float] = []
        async with _controller(install, root, server) as ctl:
            for _ in range(TURNS):
                _, end, ok = await _turn(ctl, work)
                if ok:
                    embedded.append(end)
        model = _controller(install, root, server).openclaw_config.model
        config = build_config(work, model, ToolPolicy())
        began = time.perf_counter()
        gateway = await anyio.to_thread.run_sync(
            stack.enter_context, start_gateway(install, root / "gateway", config)
        )
        lines.append(Figure(NAME, "Gateway start-up", ms(time.perf_counter() - began)))
        firsts: list[float] = []
        ends: list[float] = []
        settings = {"mode": "gateway", "gateway_url": gateway.url, "gateway_token": gateway.token}
        async with _controller(install, root, server, **settings) as ctl:
            for _ in range(TURNS):
                first, end, ok = await _turn(ctl, work)
                if ok and first is not None:
                    firsts.append(first)
                    ends.append(end)
        await anyio.to_thread.run_sync(stack.close)
    if embedded:
        lines.append(Figure(NAME, "embedded turn: answer at its end", spread(embedded)))
    if firsts:
        lines.append(Figure(NAME, "Gateway: first token the window sees", spread(firsts)))
        lines.append(Figure(NAME, "Gateway: turn end", spread(ends)))
    if embedded and firsts:
        ratio = sorted(embedded)[len(embedded) // 2] / sorted(firsts)[len(firsts) // 2]
        lines.append(Figure(NAME, "embedded end / Gateway first token", f"{ratio:.1f}x"))
    return lines


async def run() -> list[Line]:
    say(f"[{NAME}] OpenClaw: Gateway first token vs embedded turn end, {TURNS} turns each")
    try:
        install = await anyio.to_thread.run_sync(install_openclaw)
    except OpenClawUnavailable as exc:
        say(f"  OpenClaw unavailable, nothing measured: {exc}")
        return []
    with tempfile.TemporaryDirectory(prefix="atrium-bench-openclaw-") as scratch:
        lines = await _measure(install, Path(scratch))
    for line in lines:
        show(line)
    return lines
