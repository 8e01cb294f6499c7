"""The JSON-RPC dispatcher: concurrent requests, `$/cancelRequest`, spec error codes.

Nothing a peer sends can stop it: every malformed frame gets the spec's error reply (or, for a
notification, a log line) and reading goes on.

Request ids, as JSON-RPC 2.0 has them ("a String, Number, or NULL value"; numbers "SHOULD NOT
contain fractional parts", a SHOULD for the client, not a ground for refusal):

- any string, any integer, any finite number (`1.5`, `2.0`, `1e3`, `-0.0`) and null are ids.
  The reply carries the same value: a number comes back as the same double (`1e3` as `1000.0`,
  `-0.0` as `-0.0`), which is the value a client's JSON parser made of what it sent; null comes
  back as null, as the spec says, though a client then cannot tell its reply from an error
  about an unreadable frame, which is why the spec discourages it. Ids are compared as JSON
  values, so `2` and `2.0` are the same id (one is a duplicate while the other is in flight).
- anything else (true/false, an object, an array, a number too large for a double such as
  `1e999`) is no id: "Invalid Request" (-32600), with a null id as the spec requires when the
  id cannot be detected.
- `NaN` and `Infinity` are not JSON: a frame holding them is a parse error (-32700), like a
  frame that is not UTF-8 (a surrogate written as raw bytes included).

Strings must be Unicode: a lone UTF-16 surrogate (`"\\ud800"`, legal JSON escape syntax but no
character) in the params is "Invalid params" (-32602) with where it is, before any handler can
try to store or encode it. In an id it is only echoed back (escaped, as every reply is ASCII).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from mcp_servers.field_errors import describe
from sidecar.json_value import lone_surrogate
from sidecar.protocol import CANCEL_REQUEST, ErrorCode, RpcError, WireModel
from sidecar.rpc.framing import FrameTooLargeError, FrameWriter

log = logging.getLogger(__name__)

Handler = Callable[[Any], Awaitable[WireModel]]
Reply = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Route:
    params: type[BaseModel]
    handler: Handler


def _error(request_id: object, code: int, message: str, data: Any = None) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _valid_id(value: object) -> bool:
    """A JSON-RPC 2.0 id that can be echoed (see the module docstring)."""
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _not_json(literal: str) -> object:
    """`json.loads` would read NaN and ±Infinity, which JSON does not have.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"{literal} is not a JSON value")


def _parse(frame: bytes) -> object:
    """One frame as JSON: strict UTF-8 (a leading byte order mark is ignored), JSON's own
    numbers only.

    Raises:
        ValueError: not UTF-8, or not JSON.
        RecursionError: nested too deeply.
    """
    return json.loads(frame.decode("utf-8-sig"), parse_constant=_not_json)


@dataclass(frozen=True, slots=True)
class _InFlight:
    request_id: object
    task: asyncio.Task[Reply]

    def reply(self) -> Reply:
        """The reply of the finished task. A task cancelled before it first ran never reached
        `_handle`'s own cancellation reply, so it is made here."""
        if self.task.cancelled():
            return _error(self.request_id, ErrorCode.REQUEST_CANCELLED, "request cancelled")
        return self.task.result()


INITIALIZE = "initialize"
OPEN_BEFORE_INITIALIZE = frozenset({INITIALIZE, "ping", "shutdown"})


class RpcServer:
    """With `gated`, requests other than OPEN_BEFORE_INITIALIZE get NOT_INITIALIZED until an
    `initialize` request has succeeded (a client holds them until that reply)."""

    def __init__(
        self, routes: Mapping[str, Route], writer: FrameWriter, *, gated: bool = False
    ) -> None:
        self._routes = routes
        self._writer = writer
        self._initialized = not gated
        self._inflight: dict[object, asyncio.Task[Reply]] = {}
        self._batches: set[asyncio.Future[None]] = set()
        self.closing = asyncio.Event()

    def notify(self, method: str, params: WireModel) -> None:
        frame = {"jsonrpc": "2.0", "method": method, "params": params.model_dump(mode="json")}
        self._writer.send(json.dumps(frame, separators=(",", ":")).encode())

    def _send(self, payload: object) -> None:
        self._writer.send(json.dumps(payload, separators=(",", ":")).encode())

    async def serve(self, frames: AsyncIterator[bytes | FrameTooLargeError]) -> None:
        """Handle frames until EOF or `closing` is set, then wait for in-flight replies."""

        async def read_all() -> None:
            async for frame in frames:
                self._on_frame(frame)

        reading = asyncio.ensure_future(read_all())
        closing = asyncio.ensure_future(self.closing.wait())
        await asyncio.wait({reading, closing}, return_when=asyncio.FIRST_COMPLETED)
        for task in (reading, closing):
            task.cancel()
        await asyncio.gather(reading, closing, return_exceptions=True)
        await asyncio.gather(*self._inflight.values(), return_exceptions=True)
        await asyncio.gather(*self._batches, return_exceptions=True)
        await self._writer.flush()

    def _on_frame(self, frame: bytes | FrameTooLargeError) -> None:
        if isinstance(frame, FrameTooLargeError):
            self._send(_error(None, ErrorCode.INVALID_REQUEST, str(frame)))
            return
        try:
            message = _parse(frame)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            self._send(_error(None, ErrorCode.PARSE_ERROR, f"parse error: {exc}"))
            return
        if isinstance(message, list):
            self._on_batch(cast(list[object], message))
            return
        started = self._start(message)
        if isinstance(started, _InFlight):
            started.task.add_done_callback(lambda _t: self._send(started.reply()))
        elif started is not None:
            self._send(started)

    def _on_batch(self, batch: list[object]) -> None:
        if not batch:
            self._send(_error(None, ErrorCode.INVALID_REQUEST, "empty batch"))
            return
        started = [self._start(m) for m in batch]
        ready = [s for s in started if isinstance(s, dict)]
        inflight = [s for s in started if isinstance(s, _InFlight)]
        if not inflight:
            if ready:
                self._send(ready)
            return

        async def collect() -> None:
            await asyncio.gather(*(s.task for s in inflight), return_exceptions=True)
            self._send(ready + [s.reply() for s in inflight])

        batch_task = asyncio.ensure_future(collect())
        self._batches.add(batch_task)
        batch_task.add_done_callback(self._batches.discard)

    def _start(self, message: object) -> Reply | _InFlight | None:
        """Validate the envelope: return the error reply of a bad one, start a task for a good
        request, handle a notification (None)."""
        if not isinstance(message, dict):
            return _error(None, ErrorCode.INVALID_REQUEST, "a frame must be a JSON object")
        msg = cast(dict[str, Any], message)
        has_id = "id" in msg
        request_id = msg.get("id")
        reply_id = request_id if _valid_id(request_id) else None
        method = msg.get("method")
        params = msg.get("params", {})
        if (
            msg.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
            or (has_id and not _valid_id(request_id))
        ):
            return _error(reply_id, ErrorCode.INVALID_REQUEST, "invalid request")
        if not has_id:
            self._on_notification(method, params)
            return None
        if request_id in self._inflight:
            return _error(reply_id, ErrorCode.INVALID_REQUEST, "duplicate request id")
        task = asyncio.ensure_future(self._handle(request_id, method, params))
        self._inflight[request_id] = task
        task.add_done_callback(lambda _t: self._inflight.pop(request_id, None))
        return _InFlight(request_id, task)

    def _on_notification(self, method: str, params: object) -> None:
        if method == CANCEL_REQUEST:
            args = cast(dict[str, Any], params) if isinstance(params, dict) else {}
            target = args.get("id")
            task = self._inflight.get(target) if "id" in args and _valid_id(target) else None
            if task is not None:
                task.cancel()
            return
        log.debug("ignoring notification %s", method)

    async def _handle(self, request_id: object, method: str, params: object) -> Reply:
        route = self._routes.get(method)
        if route is None:
            return _error(request_id, ErrorCode.METHOD_NOT_FOUND, f"unknown method {method!r}")
        if not self._initialized and method not in OPEN_BEFORE_INITIALIZE:
            return _error(request_id, ErrorCode.NOT_INITIALIZED, f"{method} before initialize")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(request_id, ErrorCode.INVALID_PARAMS, "params must be an object")
        where = lone_surrogate(cast(dict[str, object], params))
        if where is not None:
            message = "invalid params: a string holds a lone UTF-16 surrogate, which is no text"
            detail = {"type": "string_unicode", "loc": where, "msg": "a lone UTF-16 surrogate"}
            return _error(request_id, ErrorCode.INVALID_PARAMS, message, [detail])
        try:
            typed = route.params.model_validate(params)
        except ValidationError as exc:
            details = exc.errors(include_url=False, include_context=False, include_input=False)
            message = f"invalid params: {describe(exc)}"
            return _error(request_id, ErrorCode.INVALID_PARAMS, message, details)
        try:
            result = (await route.handler(typed)).model_dump(mode="json")
        except RpcError as exc:
            return _error(request_id, exc.code, exc.message, exc.data)
        except asyncio.CancelledError:
            return _error(request_id, ErrorCode.REQUEST_CANCELLED, "request cancelled")
        except Exception:  # the dispatcher boundary: log it, answer with a typed error
            log.exception("handler for %s failed", method)
            return _error(request_id, ErrorCode.INTERNAL_ERROR, f"internal error in {method}")
        if method == INITIALIZE:
            self._initialized = True
        return {"jsonrpc": "2.0", "id": request_id, "result": result}
