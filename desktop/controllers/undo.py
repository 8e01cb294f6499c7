"""What the window does to undo: preview and rewind a thread to a turn, redo, fork from a turn.

A rewind's result reloads the thread (its messages changed); a fork selects the new thread.
The last rewind of each thread is remembered so a "Redo" can bring its turns back.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.controllers.session import SessionController
from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from sidecar.protocol import (
    ErrorObject,
    ThreadCheckpointsParams,
    ThreadCheckpointsResult,
    ThreadForkParams,
    ThreadForkResult,
    ThreadRewindParams,
    ThreadRewindResult,
)


class UndoController:
    def __init__(self, api: SidecarApi, session: SessionController) -> None:
        self._api = api
        self._session = session
        self.redo_to: dict[str, str] = {}
        """thread id -> the newest turn its last rewind undid (rewinding to it is redo)."""

    def checkpoints(
        self,
        thread_id: str,
        listed: Callable[[ThreadCheckpointsResult], None],
        failed: Callable[[ErrorObject], None],
    ) -> PendingRequest[ThreadCheckpointsResult]:
        """The thread's turns, oldest first."""
        params = ThreadCheckpointsParams(thread_id=thread_id)
        return self._api.thread_checkpoints(params).then(listed, failed)

    def preview(
        self,
        thread_id: str,
        checkpoint_id: str,
        shown: Callable[[ThreadRewindResult], None],
        failed: Callable[[ErrorObject], None],
    ) -> PendingRequest[ThreadRewindResult]:
        """What a rewind would change, nothing written."""
        params = ThreadRewindParams(thread_id=thread_id, checkpoint_id=checkpoint_id, dry_run=True)
        return self._api.thread_rewind(params).then(shown, failed)

    def rewind(
        self,
        thread_id: str,
        checkpoint_id: str,
        *,
        force: bool,
        done: Callable[[ThreadRewindResult], None],
        failed: Callable[[ErrorObject], None],
    ) -> PendingRequest[ThreadRewindResult]:
        """Rewind (or redo) and reload the thread."""

        def on_result(result: ThreadRewindResult) -> None:
            if result.direction == "undo" and result.turns:
                self.redo_to[thread_id] = result.turns[-1]
            elif result.direction == "redo":
                self.redo_to.pop(thread_id, None)
            self._session.fetch_thread(thread_id)
            done(result)

        params = ThreadRewindParams(thread_id=thread_id, checkpoint_id=checkpoint_id, force=force)
        return self._api.thread_rewind(params).then(on_result, failed)

    def fork(
        self, thread_id: str, checkpoint_id: str, failed: Callable[[ErrorObject], None]
    ) -> PendingRequest[ThreadForkResult]:
        """A new thread up to the turn, listed and selected."""

        def on_result(result: ThreadForkResult) -> None:
            self._session.refresh()
            self._session.select_thread(result.thread_id)

        params = ThreadForkParams(thread_id=thread_id, checkpoint_id=checkpoint_id)
        return self._api.thread_fork(params).then(on_result, failed)
