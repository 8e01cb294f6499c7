"""One JSON-RPC client over a child's stdin/stdout, used for the sidecar and the bare echo alike,
so a ratio between them measures the servers, not the client."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TERMINAL = frozenset({"run_finished", "run_failed", "run_cancelled"})


class RpcFailure(Exception):
    """The child answered a request with a JSON-RPC error."""


class LineClient:
    """Requests with futures keyed by id; `run/event` notifications collected per run."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.run_events: dict[str, list[dict[str, Any]]] = {}
        self._ended: dict[str, asyncio.Event] = {}
        self.stderr = bytearray()
        self._reader = asyncio.ensure_future(self._read())
        self._drainer = asyncio.ensure_future(self._drain_stderr())

    @classmethod
    async def spawn(
        cls, argv: list[str], env: Mapping[str, str] | None = None, cwd: Path = REPO
    ) -> LineClient:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=2**30,
        )
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            request_id = message.get("id")
            if request_id in self._pending:
                self._pending.pop(request_id).set_result(message)
            elif message.get("method") == "run/event":
                self._on_event(message["params"])
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the child closed its stdout"))

    def _on_event(self, params: dict[str, Any]) -> None:
        run_id = params["run_id"]
        self.run_events.setdefault(run_id, []).append(params["event"])
        if params["event"]["type"] in TERMINAL:
            self._ended.setdefault(run_id, asyncio.Event()).set()

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[:-200_000]

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send a request and return its result.

        Raises:
            RpcFailure: the child answered with an error.
        """
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        reply = await future
        if "error" in reply:
            raise RpcFailure(f"{method}: {reply['error']}")
        return reply["result"]

    async def run_to_end(self, run_id: str, within: float = 120) -> list[dict[str, Any]]:
        """Wait for the run's terminal event; return all its events (wire bodies)."""
        async with asyncio.timeout(within):
            await self._ended.setdefault(run_id, asyncio.Event()).wait()
        return self.run_events.pop(run_id)

    async def close(self, *, graceful: bool = True) -> int:
        """Ask for `shutdown` (when `graceful`), close stdin and wait; kill after 20 s."""
        if graceful and self.proc.returncode is None:
            with contextlib.suppress(RpcFailure, ConnectionError):
                async with asyncio.timeout(10):
                    await self.call("shutdown")
        assert self.proc.stdin is not None
        with contextlib.suppress(ConnectionError):
            self.proc.stdin.close()
        try:
            async with asyncio.timeout(20):
                code = await self.proc.wait()
        except TimeoutError:
            self.proc.send_signal(signal.SIGKILL)
            code = await self.proc.wait()
        await asyncio.gather(self._reader, self._drainer, return_exceptions=True)
        return code


def sidecar_env(data_dir: Path, workspace: Path, **extra: str) -> dict[str, str]:
    """The environment the e2e tests give the sidecar: temp dirs, no real keys, no keyring."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_DATA_DIR=str(data_dir),
        ATRIUM_WORKSPACE=str(workspace),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        **extra,
    )
    return env


def sidecar_argv(*python_flags: str) -> list[str]:
    return [sys.executable, *python_flags, "-m", "sidecar"]


def make_workspace(root: Path) -> Path:
    """A workspace with the one file the scripted model reads."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.md").write_text("# Notes\nthe river is wide\n", encoding="utf-8")
    return root
