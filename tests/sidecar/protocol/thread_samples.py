"""Samples of the thread history wire models (merged into `samples`): message pages, search."""

from __future__ import annotations

from sidecar.protocol import (
    HistoryMessage,
    MessageInfo,
    SearchHit,
    ThreadMessagesParams,
    ThreadMessagesResult,
    ThreadSearchParams,
    ThreadSearchResult,
    WireModel,
)

_MESSAGE = MessageInfo(
    id="m-17", thread_id="t-1", role="user", content="the zebra grazes", created_at=17.0
)

THREAD_HISTORY_SAMPLES: dict[type[WireModel], WireModel] = {
    ThreadMessagesParams: ThreadMessagesParams(thread_id="t-1", before_seq=120, limit=100),
    ThreadMessagesResult: ThreadMessagesResult(
        thread_id="t-1",
        messages=(HistoryMessage(seq=17, message=_MESSAGE),),
        has_older=True,
        has_newer=False,
    ),
    ThreadSearchParams: ThreadSearchParams(thread_id="t-1", query='zebra "NEAR(', limit=20),
    ThreadSearchResult: ThreadSearchResult(
        thread_id="t-1",
        hits=(
            SearchHit(
                message_id="m-17", seq=17, role="user", snippet="the zebra…", created_at=17.0
            ),
        ),
        has_more=False,
    ),
}
