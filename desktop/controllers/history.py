"""`TranscriptPager`: the pages of one thread's transcript, asked for as the author scrolls,
jumps or searches (what `TranscriptView` asks of its `TranscriptHistory`).

The author's own thread and a task's sub-thread (shown read-only from the run tree) page the
same way: older pages as the author scrolls up, the page around a search hit, the first page,
and back to the live end (`fetch_live`, which loads the thread again).
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from desktop.models.transcript import Transcript
from sidecar.protocol import (
    ErrorObject,
    ThreadMessagesParams,
    ThreadMessagesResult,
    ThreadSearchParams,
    ThreadSearchResult,
)

PAGE = 200
"""Messages per page when the author scrolls through a thread or jumps to a hit."""

Report = Callable[[ErrorObject, str], None]


def _never_running(_thread_id: str) -> bool:
    return False


class TranscriptPager:
    """Pages of the thread `transcript` shows. `fetch_live(thread_id)` loads the live end
    again (`thread/get`); `is_running(thread_id)` says whether a turn still adds to it."""

    def __init__(
        self,
        api: SidecarApi,
        transcript: Transcript,
        fetch_live: Callable[[str], PendingRequest | None],
        report: Report,
        is_running: Callable[[str], bool] = _never_running,
    ) -> None:
        self._api = api
        self.transcript = transcript
        self._fetch_live = fetch_live
        self._report = report
        self._is_running = is_running

    def load_older(self) -> PendingRequest[ThreadMessagesResult] | None:
        """The page before the first message shown (None: nothing older, or no thread)."""
        transcript = self.transcript
        oldest = transcript.oldest_message_id()
        thread_id = transcript.thread_id
        if thread_id is None or oldest is None or not transcript.has_older:
            return None
        params = ThreadMessagesParams(thread_id=thread_id, before_id=oldest, limit=PAGE)

        def on_page(result: ThreadMessagesResult) -> None:
            if transcript.thread_id == thread_id and transcript.oldest_message_id() == oldest:
                pairs = [(m.seq, m.message) for m in result.messages]
                transcript.prepend(pairs, result.has_older)

        return self._history_request(params, on_page)

    def load_newer(self) -> PendingRequest[ThreadMessagesResult] | None:
        """The page after the last message shown, while the transcript is detached from the
        live end; reaching the end during a run reloads the thread (its live part)."""
        transcript = self.transcript
        thread_id, newest = transcript.thread_id, transcript.newest_seq()
        if thread_id is None or newest is None or not transcript.has_newer:
            return None
        params = ThreadMessagesParams(thread_id=thread_id, after_seq=newest, limit=PAGE)

        def on_page(result: ThreadMessagesResult) -> None:
            if transcript.thread_id != thread_id or transcript.newest_seq() != newest:
                return
            if not result.has_newer and self._is_running(thread_id):
                self._fetch_live(thread_id)
                return
            transcript.append_newer([(m.seq, m.message) for m in result.messages], result.has_newer)

        return self._history_request(params, on_page)

    def jump_to_start(self) -> PendingRequest[ThreadMessagesResult] | None:
        """Show the thread's first page."""
        return self._show_page(after_seq=0)

    def jump_to_end(self) -> PendingRequest | None:
        """Back to the live end of the thread."""
        thread_id = self.transcript.thread_id
        return self._fetch_live(thread_id) if thread_id is not None else None

    def reveal_message(
        self, message_id: str, seq: int
    ) -> PendingRequest[ThreadMessagesResult] | None:
        """Show the page around a message (a search hit) unless it is shown already."""
        if self.transcript.row_of_message(message_id) is not None:
            return None
        return self._show_page(before_seq=seq + PAGE // 2)

    def search_thread(self, query: str) -> PendingRequest[ThreadSearchResult] | None:
        """Full-text search in the thread; the caller takes the `ThreadSearchResult`."""
        thread_id = self.transcript.thread_id
        if thread_id is None:
            return None
        return self._api.thread_search(ThreadSearchParams(thread_id=thread_id, query=query))

    def _show_page(
        self, *, before_seq: int | None = None, after_seq: int | None = None
    ) -> PendingRequest[ThreadMessagesResult] | None:
        transcript = self.transcript
        thread_id = transcript.thread_id
        if thread_id is None:
            return None
        params = ThreadMessagesParams(
            thread_id=thread_id, before_seq=before_seq, after_seq=after_seq, limit=PAGE
        )

        def on_page(result: ThreadMessagesResult) -> None:
            if transcript.thread_id == thread_id:
                pairs = [(m.seq, m.message) for m in result.messages]
                transcript.show_page(pairs, result.has_older, result.has_newer)

        return self._history_request(params, on_page)

    def _history_request(
        self, params: ThreadMessagesParams, on_page: Callable[[ThreadMessagesResult], None]
    ) -> PendingRequest[ThreadMessagesResult]:
        return self._api.thread_messages(params).then(
            on_page, lambda error: self._report(error, "Loading the thread")
        )
