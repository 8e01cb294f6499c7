"""Reading the sidecar's stdout: split bytes into lines, parse each line into a typed frame.

Pure Python (no Qt). The sidecar writes one JSON object per line; anything else is a malformed
frame, which the client logs and skips, so one bad line never costs the frames after it.
"""

from __future__ import annotations

import json
import logging
from typing import TypeAlias

from pydantic import ValidationError

from sidecar.protocol import NOTIFICATIONS, Notification, Request, Response, WireModel

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024


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


class LineBuffer:
    """Accumulates stdout bytes and hands out complete lines (without the newline).

    A line longer than `max_line_bytes` is dropped whole rather than growing the buffer forever.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; return the lines they completed, blank lines left out."""
        self._buffer += data
        *complete, rest = bytes(self._buffer).split(b"\n")
        self._buffer = bytearray(rest)
        lines: list[bytes] = []
        for raw in complete:
            if self._discarding:
                self._discarding = False
                continue
            line = raw.rstrip(b"\r")
            if line.strip():
                lines.append(line)
        if len(self._buffer) > self._max:
            logger.warning("dropping a sidecar line longer than %d bytes", self._max)
            self._buffer.clear()
            self._discarding = True
        return lines

    def clear(self) -> None:
        """Forget a partial line, e.g. the tail of a process that died mid-write."""
        self._buffer.clear()
        self._discarding = False


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
