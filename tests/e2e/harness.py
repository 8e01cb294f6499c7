"""Drive a real `python -m sidecar` subprocess over its stdin/stdout from async tests."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sidecar.protocol import TERMINAL_EVENT_TYPES, RunEventParams

REPO = Path(__file__).resolve().parents[2]


class RpcFailure(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code: int = error["code"]
        self.error = error


class Sidecar:
    """One sidecar process. `events` keeps every run event received, in order; `on_event`, when
    set, is called with each as it is read (before any waiter wakes), to answer at once."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[RunEventParams] = []
        self.on_event: Callable[[RunEventParams], None] | None = None
        self.raw: list[dict[str, Any]] = []
        self._changed = asyncio.Condition()
        self._reader = asyncio.ensure_future(self._read())
        self.stderr = b""

    @classmethod
    async def start(cls, data_dir: Path, workspace: Path, **env: str) -> Sidecar:
        """Spawn a sidecar and send `initialize`, as every client does before any other
        request."""
        sidecar = await cls.spawn(data_dir, workspace, **env)
        await sidecar.call("initialize", {"client_name": "tests"})
        return sidecar

    @classmethod
    async def spawn(cls, data_dir: Path, workspace: Path, **env: str) -> Sidecar:
        """Spawn a sidecar and send nothing (a test of what comes before `initialize`)."""
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
        full_env.update(
            ATRIUM_DATA_DIR=str(data_dir),
            ATRIUM_WORKSPACE=str(workspace),
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        )
        full_env.update(env)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sidecar",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            cwd=REPO,
            limit=2**30,
        )
        sidecar = cls(proc)
        sidecar._stderr_task = asyncio.ensure_future(sidecar._drain_stderr())
        return sidecar

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            async with self._changed:
                self.stderr = (self.stderr + chunk)[-200_000:]
                self._changed.notify_all()

    async def wait_for_log(self, text: bytes, within: float = 60) -> None:
        """Wait until `text` appears on the sidecar's stderr (its log)."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: text in self.stderr)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            async with self._changed:
                self.raw.append(message)
                if "id" in message and message["id"] in self._pending:
                    waiter = self._pending.pop(message["id"])
                    if not waiter.done():  # a caller that gave up waiting cancelled it
                        waiter.set_result(message)
                elif message.get("method") == "run/event":
                    event = RunEventParams.model_validate(message["params"])
                    self.events.append(event)
                    if self.on_event is not None:
                        self.on_event(event)
                self._changed.notify_all()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("sidecar closed its stdout"))

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def request(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """Write a request now; the future is its reply frame (a result or an error)."""
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        self.send_raw(json.dumps(frame).encode() + b"\n")
        return future

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send a request and return its result.

        Raises:
            RpcFailure: the sidecar answered with an error.
        """
        reply = await self.request(method, params)
        if "error" in reply:
            raise RpcFailure(reply["error"])
        return reply["result"]

    async def wait_for(
        self, predicate: Callable[[list[RunEventParams]], bool], within: float = 60
    ) -> None:
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: predicate(self.events))

    async def wait_frame(
        self, check: Callable[[dict[str, Any]], bool], within: float = 60
    ) -> dict[str, Any]:
        """The first frame read so far or later (a reply or a notification) that passes
        `check`."""

        def found() -> dict[str, Any] | None:
            return next((frame for frame in self.raw if check(frame)), None)

        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: found() is not None)
        frame = found()
        assert frame is not None
        return frame

    def run_events(self, run_id: str) -> list[RunEventParams]:
        return [e for e in self.events if e.run_id == run_id]

    async def run_to_end(self, run_id: str, within: float = 60) -> list[RunEventParams]:
        """Wait until the run's terminal event and return all its events."""
        await self.wait_for(
            lambda evs: any(
                e.run_id == run_id and e.event.type in TERMINAL_EVENT_TYPES for e in evs
            ),
            within,
        )
        return self.run_events(run_id)

    def background_runs(self, thread_id: str) -> list[str]:
        """The ids of the thread's background plan runs (delegated work), in start order."""
        return [
            e.run_id
            for e in self.events
            if e.thread_id == thread_id and e.background and e.event.type == "run_started"
        ]

    async def plan_to_end(
        self, thread_id: str, *, skip: int = 0, within: float = 60
    ) -> list[RunEventParams]:
        """Wait for the thread's background plan run number `skip` (0: the first) to start and
        end; return its events. A delegated plan runs there, beside the thread's turns."""
        await self.wait_for(lambda _evs: len(self.background_runs(thread_id)) > skip, within)
        return await self.run_to_end(self.background_runs(thread_id)[skip], within)

    def turns(self, thread_id: str) -> list[str]:
        """The ids of the thread's turns (not its background runs), in start order."""
        return [
            e.run_id
            for e in self.events
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
        ]

    async def shutdown(self) -> int:
        await self.call("shutdown")
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        async with asyncio.timeout(30):
            code = await self.proc.wait()
        await self._reader
        return code

    async def exited(self) -> int:
        """Close stdin, wait for the exit and the end of stdout and stderr (so `stderr` is
        whole); the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        async with asyncio.timeout(30):
            code = await self.proc.wait()
            await self._reader
            await self._stderr_task
        return code

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()
        await self._reader


def event_types(events: list[RunEventParams]) -> list[str]:
    return [e.event.type for e in events]
