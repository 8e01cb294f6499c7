"""`RpcClient`: JSON-RPC 2.0 over the sidecar's stdio, typed with `sidecar.protocol`.

Requests never block: `request()` returns a `PendingRequest` at once and the reply completes it
later; the rest of the desktop sends through `desktop.ipc.api.SidecarApi`, its typed face (one
method per wire method), never through `request()` with a method name. The sidecar's stdout is
decoded off the GUI thread (`FrameReader`); frames arrive here in batches, already parsed and
validated. `run/event` notifications come out of `run_event_received` as `RunEventParams`. On
every (re)start of the process the client sends `initialize` first and holds other requests
until the reply; requests in flight when the process dies fail with
`ClientErrorCode.SIDECAR_EXITED`.
"""

from __future__ import annotations

import itertools
import logging
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop.ipc.api import SidecarApi
from desktop.ipc.errors import ClientErrorCode, client_error
from desktop.ipc.framing import Decoded, FrameError, TypedNotification, TypedResponse
from desktop.ipc.pending import PendingRequest
from desktop.ipc.process import SidecarProcess
from desktop.ipc.reader import FrameReader
from sidecar.protocol import (
    INITIALIZE,
    METHODS,
    Empty,
    ErrorCode,
    ErrorObject,
    InitializeParams,
    InitializeResult,
    Notification,
    NotifyParams,
    QueueUpdateParams,
    Request,
    Response,
    RunEventParams,
    ServerStatusParams,
    WireModel,
)

logger = logging.getLogger(__name__)


class RpcClient(QObject):
    """The desktop's end of the wire protocol.

    Signals:
        initialized(InitializeResult): the sidecar answered `initialize` (after every start).
        initialize_failed(ErrorObject): it refused or did not answer `initialize`.
        run_event_received(RunEventParams): one `run/event` notification.
        server_status_received(ServerStatusParams): one `server/status` notification.
        queue_update_received(QueueUpdateParams): one `queue/update` notification.
        automation_notice_received(NotifyParams): a scheduled run or the heartbeat wants the
            author (`automation/notify`).
        malformed_frame_received(str): a line from the sidecar was skipped; the reason.
    """

    initialized = Signal(object)
    initialize_failed = Signal(object)
    run_event_received = Signal(object)
    server_status_received = Signal(object)
    queue_update_received = Signal(object)
    automation_notice_received = Signal(object)
    malformed_frame_received = Signal(str)

    def __init__(
        self,
        process: SidecarProcess,
        *,
        client_name: str = "atrium-desktop",
        client_version: str = "",
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._process = process
        self._hello = InitializeParams(client_name=client_name, client_version=client_version)
        self._ids = itertools.count(1)
        self._reader = FrameReader(parent=self)
        self._reader.frames_decoded.connect(self._on_frames_decoded)
        self._in_flight: dict[int, PendingRequest] = {}
        self._queued: list[tuple[PendingRequest, WireModel]] = []
        self._ready = False
        self._accepting = True
        self._process_gone = False
        self.server_info: InitializeResult | None = None
        process.output_received.connect(self._on_output_received)
        process.started.connect(self._on_started)
        process.died.connect(self._on_died)
        process.gave_up.connect(self._on_gave_up)
        process.stopped.connect(self._on_stopped)
        process.destroyed.connect(self._on_process_destroyed)

    @property
    def is_ready(self) -> bool:
        """True once the running sidecar has answered `initialize`."""
        return self._ready

    def request(self, method: str, params: WireModel | None = None) -> PendingRequest[Any]:
        """Send a request; the handle completes with `METHODS[method].result` or an error.

        Requests made while the sidecar is starting wait for its `initialize` reply; when no
        sidecar is coming (stopped, or restarts gave up) they fail at once with NOT_CONNECTED.

        Raises:
            KeyError: `method` is not in `METHODS`.
            TypeError: `params` is not an instance of the method's params model.
        """
        spec = METHODS[method]
        params = Empty() if params is None and spec.params is Empty else params
        if not isinstance(params, spec.params):
            raise TypeError(f"{method} takes {spec.params.__name__}, not {type(params).__name__}")
        pending = PendingRequest(next(self._ids), method)
        if self._ready or method == INITIALIZE:
            self._send(pending, params)
        elif self._accepting:
            self._queued.append((pending, params))
        else:
            pending.reject(
                client_error(ClientErrorCode.NOT_CONNECTED, "the sidecar is not running")
            )
        return pending

    def notify(self, method: str, params: WireModel) -> None:
        """Send a notification (no reply), e.g. `$/cancelRequest`; dropped when not running."""
        if self._process_gone:
            return
        frame = Notification(method=method, params=params.model_dump(mode="json"))
        self._process.write(frame.model_dump_json().encode() + b"\n")

    def _send(self, pending: PendingRequest, params: WireModel) -> None:
        body = params.model_dump(mode="json", exclude_none=True)
        frame = Request(id=pending.id, method=pending.method, params=body)
        self._reader.decoder.expect(pending.id, pending.method, METHODS[pending.method].result)
        if not self._process.write(frame.model_dump_json().encode() + b"\n"):
            self._reader.decoder.forget(pending.id)
            pending.reject(
                client_error(ClientErrorCode.NOT_CONNECTED, "the sidecar is not running")
            )
            return
        self._in_flight[pending.id] = pending

    def _on_started(self) -> None:
        self._reader.reset()
        self._ready = False
        self._accepting = True
        SidecarApi(self).initialize(self._hello).then(
            self._on_initialize_succeeded, self._on_initialize_failed
        )

    def _on_initialize_succeeded(self, result: InitializeResult) -> None:
        self.server_info = result
        self._ready = True
        queued, self._queued = self._queued, []
        for pending, params in queued:
            self._send(pending, params)
        self.initialized.emit(result)

    def _on_initialize_failed(self, error: ErrorObject) -> None:
        logger.error("sidecar refused initialize: %s (%s)", error.message, error.code)
        if error.code != ClientErrorCode.SIDECAR_EXITED:
            self._fail_queued(error)
        self.initialize_failed.emit(error)

    def _on_died(self, exit_code: int, _stderr_tail: str) -> None:
        """Requests in flight fail, but only after the output the process wrote before it ended
        was read: a reply written just before the exit still completes its request."""
        self._ready = False
        error = client_error(
            ClientErrorCode.SIDECAR_EXITED, f"the sidecar exited (code {exit_code})", exit_code
        )
        in_flight = list(self._in_flight)
        self._reader.after_pending(lambda: self._fail_in_flight(in_flight, error))

    def _fail_in_flight(self, request_ids: list[int], error: ErrorObject) -> None:
        for request_id in request_ids:
            pending = self._in_flight.pop(request_id, None)
            if pending is not None:
                self._reader.decoder.forget(request_id)
                pending.reject(error)

    def _on_gave_up(self) -> None:
        self._stop_accepting("the sidecar keeps dying; restarts gave up")

    def _on_stopped(self) -> None:
        self._stop_accepting("the sidecar was stopped")
        self._on_died(0, "")
        self._reader.close()

    def _on_process_destroyed(self) -> None:
        """The process object is gone: frames still being decoded have no one to answer."""
        self._process_gone = True
        self._stop_accepting("the sidecar was stopped")
        self._reader.close()

    def _stop_accepting(self, reason: str) -> None:
        self._ready = False
        self._accepting = False
        self._fail_queued(client_error(ClientErrorCode.NOT_CONNECTED, reason))

    def _fail_queued(self, error: ErrorObject) -> None:
        queued, self._queued = self._queued, []
        for pending, _ in queued:
            pending.reject(error)

    def _on_output_received(self, data: bytes) -> None:
        self._reader.feed(data)

    def _on_frames_decoded(self, frames: list[Decoded]) -> None:
        if self._process_gone:
            return
        for frame in frames:
            if isinstance(frame, FrameError):
                self.malformed_frame_received.emit(str(frame))
                continue
            try:
                self._dispatch(frame)
            except (
                Exception
            ) as exc:  # protocol boundary: a failing handler must not cost later frames
                sys.excepthook(type(exc), exc, exc.__traceback__)

    def _dispatch(self, frame: object) -> None:
        if isinstance(frame, TypedNotification):
            if isinstance(frame.params, RunEventParams):
                self.run_event_received.emit(frame.params)
            elif isinstance(frame.params, ServerStatusParams):
                self.server_status_received.emit(frame.params)
            elif isinstance(frame.params, QueueUpdateParams):
                self.queue_update_received.emit(frame.params)
            elif isinstance(frame.params, NotifyParams):
                self.automation_notice_received.emit(frame.params)
        elif isinstance(frame, TypedResponse):
            self._complete(frame)
        elif isinstance(frame, Response):
            logger.warning("reply for unknown request id %r: %s", frame.id, frame.error)
        elif isinstance(frame, Request):
            self._refuse(frame)
        elif isinstance(frame, Notification):
            logger.debug("ignoring unknown notification %s", frame.method)

    def _complete(self, response: TypedResponse) -> None:
        pending = self._in_flight.pop(response.id, None)
        if pending is None:
            logger.warning("reply for unknown request id %r: %s", response.id, response.error)
            return
        if response.error is not None:
            pending.reject(response.error)
        elif response.result is not None:
            pending.resolve(response.result)

    def _refuse(self, request: Request) -> None:
        logger.warning("the sidecar sent a request (%s); the desktop serves none", request.method)
        error = ErrorObject(code=ErrorCode.METHOD_NOT_FOUND, message="no such method")
        reply = Response(id=request.id, error=error)
        self._process.write(reply.model_dump_json().encode() + b"\n")
