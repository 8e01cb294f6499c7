"""Concurrent requests, cancellation, batches, notifications out, and stopping."""

from __future__ import annotations

import anyio
import pytest

from sidecar.protocol import NOTIFICATIONS, ErrorCode, RunEventParams, Token
from tests.sidecar.rpc.peer import REPLY_TIMEOUT_S, Peer, ScriptedRoutes, error_code

pytestmark = pytest.mark.anyio


async def _started(scripted: ScriptedRoutes, key: str) -> None:
    with anyio.fail_after(REPLY_TIMEOUT_S):
        await scripted.gates[key].started.wait()


async def test_a_slow_request_does_not_block_a_ping_sent_after_it(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "a"}, request_id="slow"))
    await _started(scripted, "a")
    ping = await peer.call("ping", request_id="fast")
    assert ping["result"] == {}
    scripted.gates["a"].release.set()
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "slow", "result": {"text": "a"}}


async def test_replies_follow_completion_order_and_keep_their_ids(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    keys = ["k0", "k1", "k2", "k3"]
    peer.send(*(peer.request_frame("test/slow", {"key": k}, request_id=k) for k in keys))
    for key in keys:
        await _started(scripted, key)
    for key in reversed(keys):
        scripted.gates[key].release.set()
        assert await peer.receive() == {"jsonrpc": "2.0", "id": key, "result": {"text": key}}


async def test_cancel_request_of_an_in_flight_request_replies_request_cancelled(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "c"}, request_id=41))
    await _started(scripted, "c")
    peer.cancel(41)
    reply = await peer.receive()
    assert reply["id"] == 41
    assert error_code(reply) == ErrorCode.REQUEST_CANCELLED
    assert scripted.gates["c"].cancelled.is_set()
    await peer.assert_alive()


async def test_a_request_cancelled_before_its_handler_ran_still_gets_a_reply(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    # Both frames arrive in one chunk: the cancel is read before the request's task first runs.
    peer.send(
        peer.request_frame("test/slow", {"key": "early"}, request_id="early"),
        peer.notification_frame("$/cancelRequest", {"id": "early"}),
    )
    reply = await peer.receive()
    assert reply["id"] == "early"
    assert error_code(reply) == ErrorCode.REQUEST_CANCELLED
    assert not scripted.gates["early"].started.is_set()
    await peer.assert_alive()


async def test_the_id_of_a_cancelled_request_can_be_used_again(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "r"}, request_id=5))
    await _started(scripted, "r")
    peer.cancel(5)
    assert error_code(await peer.receive()) == ErrorCode.REQUEST_CANCELLED
    assert (await peer.call("test/echo", {"text": "again"}, request_id=5))["result"] == {
        "text": "again"
    }


@pytest.mark.parametrize(
    "params",
    [{"id": 999}, {"id": "unknown"}, {"id": [1]}, {"id": {"a": 1}}, {"id": None}, [1], None, "x"],
    ids=repr,
)
async def test_cancel_requests_that_match_nothing_are_ignored(
    peer: Peer, scripted: ScriptedRoutes, params: object
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "keep"}, request_id=1))
    await _started(scripted, "keep")
    peer.send(peer.notification_frame("$/cancelRequest", params))
    await peer.assert_alive()
    assert not scripted.gates["keep"].cancelled.is_set()
    scripted.gates["keep"].release.set()
    assert (await peer.receive())["result"] == {"text": "keep"}


async def test_a_duplicate_in_flight_id_is_an_invalid_request(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "d"}, request_id=7))
    await _started(scripted, "d")
    peer.send(peer.request_frame("test/echo", {"text": "dup"}, request_id=7))
    reply = await peer.receive()
    assert reply["id"] == 7
    assert error_code(reply) == ErrorCode.INVALID_REQUEST
    scripted.gates["d"].release.set()
    assert await peer.receive() == {"jsonrpc": "2.0", "id": 7, "result": {"text": "d"}}
    assert (await peer.call("test/echo", {"text": "free"}, request_id=7))["result"] == {
        "text": "free"
    }


async def test_a_batch_replies_with_one_array_that_omits_notifications(peer: Peer) -> None:
    peer.send(
        [
            peer.request_frame("ping", request_id=1),
            peer.notification_frame("test/echo", {"text": "n"}),
            peer.request_frame("test/echo", {"text": "ab", "times": 2}, request_id=2),
            peer.request_frame("nope", request_id=3),
            peer.request_frame("test/echo", {"text": 1}, request_id=4),
        ]
    )
    reply = await peer.receive()
    assert isinstance(reply, list)
    by_id = {r["id"]: r for r in reply}
    assert sorted(by_id) == [1, 2, 3, 4]
    assert by_id[1]["result"] == {}
    assert by_id[2]["result"] == {"text": "abab"}
    assert error_code(by_id[3]) == ErrorCode.METHOD_NOT_FOUND
    assert error_code(by_id[4]) == ErrorCode.INVALID_PARAMS
    await peer.assert_alive()


async def test_a_batch_of_only_notifications_gets_no_reply(peer: Peer) -> None:
    peer.send(
        [
            peer.notification_frame("ping"),
            peer.notification_frame("whatever", {"a": 1}),
            peer.notification_frame("$/cancelRequest", {"id": 1}),
        ]
    )
    await peer.assert_alive()


async def test_invalid_members_of_a_batch_are_answered_inside_its_array(peer: Peer) -> None:
    peer.send([1, {"jsonrpc": "2.0", "id": 5, "method": "ping"}, {"id": 6, "method": "ping"}])
    reply = await peer.receive()
    assert isinstance(reply, list)
    assert sorted(((r["id"] or 0), "error" in r) for r in reply) == [
        (0, True),
        (5, False),
        (6, True),
    ]
    assert {error_code(r) for r in reply if "error" in r} == {ErrorCode.INVALID_REQUEST}
    await peer.assert_alive()


async def test_a_batch_of_only_invalid_members_is_answered_with_an_array(peer: Peer) -> None:
    peer.send([1, 2, 3])
    reply = await peer.receive()
    assert isinstance(reply, list)
    assert [(r["id"], error_code(r)) for r in reply] == [(None, ErrorCode.INVALID_REQUEST)] * 3


async def test_a_slow_batch_does_not_block_later_requests(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(
        [
            peer.request_frame("test/slow", {"key": "b"}, request_id="b1"),
            peer.request_frame("ping", request_id="b2"),
        ]
    )
    await _started(scripted, "b")
    assert (await peer.call("ping", request_id="after"))["result"] == {}
    scripted.gates["b"].release.set()
    reply = await peer.receive()
    assert sorted(r["id"] for r in reply) == ["b1", "b2"]


async def test_a_cancelled_member_of_a_batch_is_answered_in_the_batch(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(
        [
            peer.request_frame("test/slow", {"key": "x"}, request_id="x"),
            peer.request_frame("test/echo", {"text": "y"}, request_id="y"),
        ],
        peer.notification_frame("$/cancelRequest", {"id": "x"}),
    )
    reply = await peer.receive()
    by_id = {r["id"]: r for r in reply}
    assert error_code(by_id["x"]) == ErrorCode.REQUEST_CANCELLED
    assert by_id["y"]["result"] == {"text": "y"}


async def test_notify_writes_a_run_event_notification(peer: Peer) -> None:
    params = RunEventParams(run_id="r", thread_id="t", seq=0, event=Token(text="hé"))
    peer.server.notify("run/event", params)
    frame = await peer.receive()
    assert set(frame) == {"jsonrpc", "method", "params"}
    assert NOTIFICATIONS[frame["method"]].model_validate(frame["params"]) == params


async def test_at_eof_the_server_finishes_in_flight_requests_then_returns(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "e"}, request_id="e"))
    await _started(scripted, "e")
    peer.reader.feed_eof()
    assert not peer.serving.done()
    scripted.gates["e"].release.set()
    await peer.close()
    assert peer.unread() == [{"jsonrpc": "2.0", "id": "e", "result": {"text": "e"}}]


async def test_a_batch_in_flight_at_eof_is_still_answered(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send([peer.request_frame("test/slow", {"key": "z"}, request_id="z")])
    await _started(scripted, "z")
    peer.reader.feed_eof()
    scripted.gates["z"].release.set()
    await peer.close()
    assert peer.unread() == [[{"jsonrpc": "2.0", "id": "z", "result": {"text": "z"}}]]


async def test_closing_stops_reading_but_answers_in_flight_requests(
    peer: Peer, scripted: ScriptedRoutes
) -> None:
    peer.send(peer.request_frame("test/slow", {"key": "s"}, request_id="s"))
    await _started(scripted, "s")
    peer.server.closing.set()
    scripted.gates["s"].release.set()
    with anyio.fail_after(REPLY_TIMEOUT_S):
        await peer.serving
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "s", "result": {"text": "s"}}
