"""`thread/messages` and `thread/search` through the real sidecar, on a thread seeded in its
database: every message reachable by pages, any author text searchable, bad input refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sidecar.protocol import ErrorCode
from tests.e2e.harness import RpcFailure, Sidecar

pytestmark = pytest.mark.anyio

MESSAGES = 5_000


def seed_messages(data_dir: Path, thread_id: str, count: int) -> None:
    """Append `count` messages straight into the database (as a long-lived thread would have)."""
    conn = sqlite3.connect(data_dir / "atrium.db", timeout=30)
    try:
        with conn:
            conn.executemany(
                "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
                (
                    (
                        f"{thread_id}-{n}",
                        thread_id,
                        "user" if n % 2 == 0 else "assistant",
                        "the zebra grazes" if n == 17 else f"message {n}",
                        float(n),
                    )
                    for n in range(count)
                ),
            )
    finally:
        conn.close()


async def test_pages_reach_every_message_from_the_newest_back_to_the_first(
    sidecar: Sidecar, sidecar_data: Path
) -> None:
    thread = await sidecar.call("thread/create", {"title": "long"})
    seed_messages(sidecar_data, thread["id"], MESSAGES)
    page = await sidecar.call("thread/messages", {"thread_id": thread["id"], "limit": 1000})
    assert page["has_newer"] is False
    contents: list[str] = []
    while True:
        contents[:0] = [m["message"]["content"] for m in page["messages"]]
        if not page["has_older"]:
            break
        cursor = page["messages"][0]["seq"]
        page = await sidecar.call(
            "thread/messages", {"thread_id": thread["id"], "before_seq": cursor, "limit": 1000}
        )
    assert len(contents) == MESSAGES
    assert contents[0] == "message 0" and contents[17] == "the zebra grazes"
    newest = await sidecar.call("thread/get", {"thread_id": thread["id"], "limit": 3})
    oldest_shown = newest["messages"][0]["id"]
    before = await sidecar.call(
        "thread/messages", {"thread_id": thread["id"], "before_id": oldest_shown, "limit": 2}
    )
    assert [m["message"]["content"] for m in before["messages"]] == [
        f"message {MESSAGES - 5}",
        f"message {MESSAGES - 4}",
    ]
    assert before["has_newer"] is True


async def test_search_finds_the_word_of_message_17_and_its_page_holds_it(
    sidecar: Sidecar, sidecar_data: Path
) -> None:
    thread = await sidecar.call("thread/create", {"title": "long"})
    seed_messages(sidecar_data, thread["id"], MESSAGES)
    found = await sidecar.call("thread/search", {"thread_id": thread["id"], "query": "zebra"})
    assert [h["message_id"] for h in found["hits"]] == [f"{thread['id']}-17"]
    assert "zebra" in found["hits"][0]["snippet"] and found["has_more"] is False
    page = await sidecar.call(
        "thread/messages",
        {"thread_id": thread["id"], "before_seq": found["hits"][0]["seq"] + 1, "limit": 50},
    )
    assert page["messages"][-1]["message"]["id"] == f"{thread['id']}-17"
    assert page["has_older"] is False


async def test_search_takes_any_text_and_pages_its_hits(
    sidecar: Sidecar, sidecar_data: Path
) -> None:
    thread = await sidecar.call("thread/create", {"title": "t"})
    seed_messages(sidecar_data, thread["id"], 300)
    for query in ['"', "NEAR(", "message*", "-message", "content:message", "", "((("]:
        result = await sidecar.call(
            "thread/search", {"thread_id": thread["id"], "query": query, "limit": 5}
        )
        assert len(result["hits"]) <= 5
    first = await sidecar.call(
        "thread/search", {"thread_id": thread["id"], "query": "message", "limit": 100}
    )
    assert first["has_more"] is True
    rest = await sidecar.call(
        "thread/search",
        {
            "thread_id": thread["id"],
            "query": "message",
            "limit": 200,
            "before_seq": first["hits"][-1]["seq"],
        },
    )
    assert len(first["hits"]) + len(rest["hits"]) == 299  # every message but the zebra one
    assert rest["has_more"] is False


async def test_bad_history_requests_get_typed_errors(sidecar: Sidecar) -> None:
    thread = await sidecar.call("thread/create", {"title": "t"})
    bad: list[tuple[str, dict[str, object], int]] = [
        ("thread/messages", {"thread_id": "nope"}, ErrorCode.THREAD_NOT_FOUND),
        ("thread/search", {"thread_id": "nope", "query": "x"}, ErrorCode.THREAD_NOT_FOUND),
        (
            "thread/messages",
            {"thread_id": thread["id"], "before_seq": 5, "after_seq": 1},
            ErrorCode.INVALID_PARAMS,
        ),
        (
            "thread/messages",
            {"thread_id": thread["id"], "before_id": "no-such-message"},
            ErrorCode.INVALID_PARAMS,
        ),
        ("thread/messages", {"thread_id": thread["id"], "limit": 0}, ErrorCode.INVALID_PARAMS),
        ("thread/messages", {"thread_id": thread["id"], "limit": 5000}, ErrorCode.INVALID_PARAMS),
        ("thread/search", {"thread_id": thread["id"]}, ErrorCode.INVALID_PARAMS),
        (
            "thread/search",
            {"thread_id": thread["id"], "query": "x" * 1001},
            ErrorCode.INVALID_PARAMS,
        ),
    ]
    for method, params, code in bad:
        with pytest.raises(RpcFailure) as failure:
            await sidecar.call(method, params)
        assert failure.value.code == code, (method, params)
    empty = await sidecar.call("thread/messages", {"thread_id": thread["id"]})
    assert (empty["messages"], empty["has_older"], empty["has_newer"]) == ([], False, False)
