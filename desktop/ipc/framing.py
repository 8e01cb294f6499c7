"""Reading the sidecar's stdout: split bytes into lines, parse each line into a typed frame.

Pure Python (no Qt), so it runs on the reader thread (`desktop.ipc.reader`), never on the GUI
thread. The sidecar writes one JSON object per line; anything else is a malformed frame, which
the client logs and skips, so one bad line never costs the frames after it.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TypeAlias

from pydantic import ValidationError

from desktop.ipc.errors import ClientErrorCode
from sidecar.protocol import (
    NOTIFICATIONS,
    ErrorObject,
    LineSplitter,
    LineTooLongError,
    Notification,
    Request,
    Response,
    WireModel,
)

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
INVALID_RESULT = int(ClientErrorCode.INVALID_RESULT)


class FrameError(ValueError):
    """A line from the sidecar that is not a valid JSON-RPC frame."""


class TypedNotification:
    """A notification whose params were validated against `NOTIFICATIONS[method]`."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: WireModel) -> None:
        self.method = method
        self.params = params


Frame: TypeAlias = Response | Request | TypedNotification | Notification
"""What a line can be: a reply, a request from the sidecar, a known or an unknown notification."""


class TypedResponse:
    """A reply whose result was validated against the method's result model (or its error)."""

    __slots__ = ("error", "id", "result")

    def __init__(self, request_id: int, result: WireModel | None, error: ErrorObject | None):
        self.id = request_id
        self.result = result
        self.error = error


Decoded: TypeAlias = Frame | TypedResponse | FrameError
"""What the decoder hands out per line: a frame, a validated reply, or why a line was skipped."""


class FrameDecoder:
    """Byte chunks in, decoded frames out: one `LineSplitter` (linear) and `parse_frame`.

    Replies to requests announced with `expect` come out as `TypedResponse`, their result already
    validated (a result that does not fit is an `INVALID_RESULT` error), so no JSON or pydantic
    work is left for the thread that takes the frames. `expect`/`forget` may be called from
    another thread than `feed`.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._splitter = LineSplitter(max_line_bytes)
        self._expected: dict[int, tuple[str, type[WireModel]]] = {}
        self._lock = threading.Lock()

    def expect(self, request_id: int, method: str, result_model: type[WireModel]) -> None:
        """A request went out: validate its reply against `result_model`."""
        with self._lock:
            self._expected[request_id] = (method, result_model)

    def forget(self, request_id: int) -> None:
        with self._lock:
            self._expected.pop(request_id, None)

    def reset(self) -> None:
        """Forget a partial line, e.g. the tail of a process that died mid-write."""
        self._splitter.finish()

    def feed(self, data: bytes) -> list[Decoded]:
        """Decode the lines `data` completes, in order."""
        decoded: list[Decoded] = []
        for line in self._splitter.feed(data):
            if isinstance(line, LineTooLongError):
                logger.warning("dropping a sidecar line: %s", line)
                decoded.append(FrameError(str(line)))
                continue
            try:
                frame = parse_frame(line)
            except FrameError as exc:
                logger.warning("ignoring malformed frame from the sidecar (%s): %.200r", exc, line)
                decoded.append(exc)
                continue
            decoded.append(self._typed(frame) if isinstance(frame, Response) else frame)
        return decoded

    def _typed(self, response: Response) -> Response | TypedResponse:
        request_id = response.id
        if not isinstance(request_id, int):
            return response
        with self._lock:
            expected = self._expected.pop(request_id, None)
        if expected is None:
            return response
        if response.error is not None:
            return TypedResponse(request_id, None, response.error)
        method, model = expected
        try:
            result = model.model_validate({} if response.result is None else response.result)
        except ValidationError as exc:
            message = f"{method} returned an invalid result"
            logger.warning("%s: %s", message, exc)
            errors = exc.errors(include_url=False, include_context=False)
            error = ErrorObject(code=INVALID_RESULT, message=message, data=errors)
            return TypedResponse(request_id, None, error)
        return TypedResponse(request_id, result, None)


def parse_frame(line: bytes) -> Frame:
    """Parse one line into a frame.

    Raises:
        FrameError: the line is not JSON, not an object, or does not match the envelope or the
            notification's params model.
    """
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FrameError(f"not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise FrameError("not a JSON object")
    try:
        if "method" not in obj:
            return Response.model_validate(obj)
        if "id" in obj:
            return Request.model_validate(obj)
        notification = Notification.model_validate(obj)
        model = NOTIFICATIONS.get(notification.method)
        if model is None:
            return notification
        return TypedNotification(notification.method, model.model_validate(notification.params))
    except ValidationError as exc:
        raise FrameError(f"invalid frame: {exc.error_count()} validation error(s)") from exc
