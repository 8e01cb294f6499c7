"""`FrameReader`: decodes the sidecar's stdout on a thread of its own, off the GUI thread.

The GUI thread only hands over byte chunks (`feed`); splitting lines, `json.loads` and pydantic
validation happen on the reader thread. Decoded frames come back in batches: the reader thread
appends to an outbox and posts one queued signal when the outbox turns non-empty, and the GUI
thread takes everything waiting at once. So a burst of ten thousand token events costs the GUI
thread one wake-up, not ten thousand.

Markers (`reset`, `after_pending`) travel in the same queue as the bytes, so a callback queued
after some output runs after every frame of that output was delivered (the client relies on it:
a reply written just before the sidecar exits still completes its request).

The GUI thread takes a batch in slices of at most `SLICE_S` of its time, posting itself the rest,
so a backlog of thousands of frames never holds off painting and timers for longer than that.

The thread starts on the first chunk and ends after `idle_s` without input (or at `close`), so
a reader that is not in use holds no thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.ipc.framing import MAX_LINE_BYTES, Decoded, FrameDecoder

logger = logging.getLogger(__name__)

SLICE_S = 0.008
"""GUI-thread time one slice of a batch may take before the event loop runs again."""
SLICE_FRAMES = 32
"""Frames handed over per `frames_decoded` signal within a slice."""

_RESET = object()
_STOP = object()


class _Marker:
    __slots__ = ("callback",)

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback


class FrameReader(QObject):
    """Decodes on a worker thread; `frames_decoded(list)` carries each batch on the GUI thread.

    Signals:
        frames_decoded(list[Decoded]): frames in order (after-pending callbacks already run in
            their place).
    """

    frames_decoded = Signal(object)
    _batch_ready = Signal()

    def __init__(
        self,
        max_line_bytes: int = MAX_LINE_BYTES,
        *,
        idle_s: float = 30.0,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.decoder = FrameDecoder(max_line_bytes)
        self._idle_s = idle_s
        self._inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._outbox: list[Decoded | _Marker] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._taken: deque[Decoded | _Marker] = deque()
        self._draining = False
        self._batch_ready.connect(self._on_batch_ready)

    def feed(self, data: bytes) -> None:
        """Hand over a chunk of stdout (GUI thread; returns at once)."""
        self._put(data)

    def reset(self) -> None:
        """Forget a partial line once everything fed so far is decoded (a new process)."""
        self._put(_RESET)

    def after_pending(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the GUI thread after every frame fed so far was delivered."""
        self._put(_Marker(callback))

    def close(self) -> None:
        """Stop the thread after what was fed; later input starts it again."""
        self._put(_STOP)

    def _put(self, item: object) -> None:
        with self._lock:
            self._inbox.put(item)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="atrium-frame-reader", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                item = self._inbox.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._inbox.empty():
                        self._thread = None
                        return
                continue
            if item is _STOP:
                with self._lock:
                    if self._inbox.empty():
                        self._thread = None
                        return
                continue
            if not self._handle(item):
                return

    def _handle(self, item: object) -> bool:
        decoded: list[Decoded | _Marker]
        if item is _RESET:
            self.decoder.reset()
            return True
        if isinstance(item, _Marker):
            decoded = [item]
        else:
            assert isinstance(item, bytes)
            decoded = list(self.decoder.feed(item))
            if not decoded:
                return True
        with self._lock:
            was_empty = not self._outbox
            self._outbox.extend(decoded)
        if was_empty:
            try:
                self._batch_ready.emit()
            except RuntimeError:  # the reader was deleted with frames in flight: nobody listens
                with self._lock:
                    self._thread = None
                return False
        return True

    def _on_batch_ready(self) -> None:
        with self._lock:
            batch, self._outbox = self._outbox, []
        self._taken.extend(batch)
        if not self._draining:
            self._drain()

    def _drain(self) -> None:
        """Deliver taken frames for at most `SLICE_S`, then let the event loop run."""
        self._draining = True
        deadline = time.perf_counter() + SLICE_S
        taken = self._taken
        while taken and time.perf_counter() < deadline:
            frames: list[Decoded] = []
            while taken and len(frames) < SLICE_FRAMES and not isinstance(taken[0], _Marker):
                frames.append(taken.popleft())  # type: ignore[arg-type]
            if frames:
                self.frames_decoded.emit(frames)
            elif taken:
                marker = taken.popleft()
                assert isinstance(marker, _Marker)
                marker.callback()
        if taken:
            QTimer.singleShot(0, self._drain)
        else:
            self._draining = False
