"""Scripted model servers: real model-API wire formats on 127.0.0.1, driven by a per-test script.

No real model is reachable in tests, so every client (LiteLLM, Claude Code, Codex) is pointed at a
`ScriptedModelServer`. A test queues `Reply` values; each generation request pops the next one (or
asks a callable), and the dialect module renders it in the real wire format, streaming or not.
Every request is recorded so tests can assert on what the client actually sent.

    with ScriptedModelServer(OpenAIChatDialect(), [Reply.text("hi")]) as server:
        call_client(base_url=server.url + "/v1")
        assert server.generation_requests[0].body["model"] == "scripted"
"""

from __future__ import annotations

import json
import queue
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from tests.fakes.script import (
    RecordedRequest,
    Reply,
    Responder,
    ToolCall,
    estimate_tokens,
    split_chunks,
)

__all__ = [
    "Dialect",
    "Exchange",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedModelServer",
    "ToolCall",
    "estimate_tokens",
    "split_chunks",
]


class Exchange:
    """The dialect's handle on one request: write JSON, SSE events, or pause mid-stream."""

    def __init__(self, handler: _Handler, request: RecordedRequest, reply: Reply | None) -> None:
        self._h = handler
        self.request = request
        self.reply = reply
        self._stream_started = False

    @property
    def stopping(self) -> threading.Event:
        return self._h.server.stopping  # type: ignore[attr-defined]

    def send_json(self, status: int, obj: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.send_bytes(status, json.dumps(obj).encode(), "application/json", headers)

    def send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        h = self._h
        h.send_response(status)
        h.send_header("content-type", content_type)
        h.send_header("content-length", str(len(data)))
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()

    def start_stream(self) -> None:
        """Send SSE headers; the connection closes when the handler returns."""
        h = self._h
        h.send_response(200)
        h.send_header("content-type", "text/event-stream; charset=utf-8")
        h.send_header("cache-control", "no-cache")
        h.send_header("connection", "close")
        h.end_headers()
        h.close_connection = True
        self._stream_started = True

    def sse(self, data: Any, event: str | None = None) -> None:
        """One SSE event; `data` is JSON-encoded unless it is already a str."""
        payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        head = f"event: {event}\n" if event else ""
        self._h.wfile.write(f"{head}data: {payload}\n\n".encode())
        self._h.wfile.flush()
        if self.reply is not None and self.reply.chunk_delay:
            time.sleep(self.reply.chunk_delay)

    def pause_mid_stream(self, *, before_finish: bool = False) -> None:
        """Called by dialects after the stream preamble (and, where they support it, again
        before the finish reason); honours `.after(ev, mid_stream=True)` at the first and
        `.after(ev, before_finish=True)` at the second."""
        reply = self.reply
        if reply is None or reply.gate is None or not reply.gate_mid_stream:
            return
        if reply.gate_before_finish != before_finish:
            return
        self.wait_released(reply.gate)
        if self.request.client_disconnected.is_set():
            raise BrokenPipeError("client went away mid-stream")

    def wait_released(self, release: threading.Event) -> None:
        """Block until release/stop, noting whether the client hung up meanwhile."""
        sock: socket.socket = self._h.connection
        while not release.is_set() and not self.stopping.is_set():
            if release.wait(0.02):
                break
            if _peer_closed(sock):
                self._h.server.note_disconnect(self.request)
                return


def _peer_closed(sock: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Dialect(Protocol):
    """A wire format: which requests are generations, how replies and errors look."""

    name: str

    def is_generation(self, request: RecordedRequest) -> bool: ...

    def handle_other(self, exchange: Exchange) -> None:
        """Answer a non-generation request (model list, token count, 404)."""
        ...

    def render(self, exchange: Exchange, reply: Reply) -> None:
        """Send `reply` as a streaming or non-streaming generation response."""
        ...

    def error_body(self, status: int, message: str) -> Any: ...


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server  # pyright: ignore[reportIncompatibleVariableOverride]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _dispatch(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=raw,
            body=body,
        )
        request.is_generation = self.command == "POST" and owner.dialect.is_generation(request)
        reply = owner._next_reply(request) if request.is_generation else None
        owner._record(request)
        exchange = Exchange(self, request, reply)
        try:
            if reply is None:
                owner.dialect.handle_other(exchange)
            else:
                _answer(owner.dialect, exchange, reply)
        except (BrokenPipeError, ConnectionResetError):
            self.server.note_disconnect(request)
            self.close_connection = True


def _answer(dialect: Dialect, exchange: Exchange, reply: Reply) -> None:
    if reply.delay:
        time.sleep(reply.delay)
    if reply.gate is not None and not reply.gate_mid_stream:
        exchange.wait_released(reply.gate)
    gone = exchange.request.client_disconnected.is_set()
    if reply.disconnect or gone or exchange.stopping.is_set():
        exchange._h.close_connection = True
        return
    if reply.raw_body is not None:
        exchange.send_bytes(reply.error_status or 200, reply.raw_body, reply.raw_content_type)
        exchange._h.close_connection = True
        return
    if reply.error_status is not None:
        body = reply.error_body
        if body is None:
            body = dialect.error_body(reply.error_status, f"scripted error {reply.error_status}")
        exchange.send_json(reply.error_status, body, reply.error_headers)
        return
    dialect.render(exchange, reply)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedModelServer
    stopping: threading.Event
    disconnects: queue.Queue[RecordedRequest]
    _disconnect_lock = threading.Lock()

    def note_disconnect(self, request: RecordedRequest) -> None:
        """Flag `request` as abandoned by its client and queue it, once."""
        with self._disconnect_lock:
            if request.client_disconnected.is_set():
                return
            request.client_disconnected.set()
        self.disconnects.put(request)


class ScriptedModelServer:
    """A threaded fake model API on 127.0.0.1 with an ephemeral port.

    `script` replies are consumed in order by generation requests; each item is a `Reply` or a
    callable taking the `RecordedRequest`. When the script runs out, `fallback` answers (a Reply
    or callable); `exhausted` counts how often that happened.
    """

    def __init__(
        self,
        dialect: Dialect,
        script: Iterable[Responder] = (),
        *,
        fallback: Responder | None = None,
    ) -> None:
        self.dialect = dialect
        self.fallback: Responder = fallback if fallback is not None else Reply.text("ok")
        self.exhausted = 0
        self.requests: list[RecordedRequest] = []
        self._script: deque[Responder] = deque(script)
        self._lock = threading.Condition()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.disconnects: queue.Queue[RecordedRequest] = queue.Queue()

    # -- scripting -----------------------------------------------------------------------------
    def push(self, *replies: Responder) -> None:
        """Append replies to the script (may be called while clients are running)."""
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._script:
                item = self._script.popleft()
            else:
                self.exhausted += 1
                item = self.fallback
        return item(request) if callable(item) else item

    # -- recording -----------------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    @property
    def generation_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_generation]

    @property
    def paths(self) -> list[str]:
        """`"METHOD /path"` of every request, in arrival order."""
        with self._lock:
            return [f"{r.method} {r.path}" for r in self.requests]

    def wait_for_generations(self, count: int, timeout: float = 60.0) -> list[RecordedRequest]:
        """Block until `count` generation requests arrived; raises TimeoutError otherwise."""
        with self._lock:
            ok = self._lock.wait_for(
                lambda: sum(r.is_generation for r in self.requests) >= count, timeout
            )
            if not ok:
                raise TimeoutError(f"saw {self.paths} waiting for {count} generations")
            return [r for r in self.requests if r.is_generation]

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (no trailing slash, no /v1)."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ScriptedModelServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        httpd.stopping = threading.Event()
        httpd.disconnects = self.disconnects
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; releases any hanging replies so handler threads end."""
        httpd = self._httpd
        if httpd is None:
            return
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
