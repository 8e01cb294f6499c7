"""`FrameReader`: decoding happens off the GUI thread and frames come back in ordered batches."""

from __future__ import annotations

import json
import threading

from pytestqt.qtbot import QtBot

from desktop.ipc.framing import Decoded, FrameError, TypedNotification
from desktop.ipc.reader import FrameReader
from sidecar.protocol import RunEventParams, Token

TIMEOUT_MS = 10_000


def _line(seq: int) -> bytes:
    params = RunEventParams(run_id="r", thread_id="t", seq=seq, event=Token(text=f"{seq} "))
    frame = {"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump(mode="json")}
    return json.dumps(frame).encode() + b"\n"


def _seqs(frames: list[Decoded]) -> list[int]:
    out: list[int] = []
    for frame in frames:
        assert isinstance(frame, TypedNotification)
        assert isinstance(frame.params, RunEventParams)
        out.append(frame.params.seq)
    return out


def test_10000_lines_arrive_in_order_in_few_batches_decoded_off_the_gui_thread(
    qtbot: QtBot,
) -> None:
    reader = FrameReader()
    batches: list[list[Decoded]] = []
    reader.frames_decoded.connect(batches.append)
    decoding_threads: set[int] = set()
    decode = reader.decoder.feed

    def spy(data: bytes) -> list[Decoded]:
        decoding_threads.add(threading.get_ident())
        return decode(data)

    reader.decoder.feed = spy  # type: ignore[method-assign]
    stream = b"".join(_line(n) for n in range(10_000))
    for start in range(0, len(stream), 1000):  # chunks cut lines anywhere
        reader.feed(stream[start : start + 1000])
    qtbot.waitUntil(lambda: sum(len(b) for b in batches) == 10_000, timeout=TIMEOUT_MS)
    assert _seqs([f for batch in batches for f in batch]) == list(range(10_000))
    assert threading.get_ident() not in decoding_threads
    assert len(batches) < 10_000  # many lines share one wake-up of the GUI thread
    reader.close()


def test_a_callback_after_pending_runs_after_the_frames_fed_before_it(qtbot: QtBot) -> None:
    reader = FrameReader()
    seen: list[object] = []
    reader.frames_decoded.connect(lambda frames: seen.extend(_seqs(frames)))
    reader.feed(_line(0) + _line(1))
    reader.after_pending(lambda: seen.append("marker"))
    reader.feed(_line(2))
    qtbot.waitUntil(lambda: len(seen) == 4, timeout=TIMEOUT_MS)
    assert seen == [0, 1, "marker", 2]
    reader.close()


def test_reset_drops_the_partial_line_of_the_previous_process(qtbot: QtBot) -> None:
    reader = FrameReader()
    seen: list[Decoded] = []
    reader.frames_decoded.connect(seen.extend)
    reader.feed(_line(0) + b'{"jsonrpc": "2.0", "meth')
    reader.reset()
    reader.feed(_line(1))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=TIMEOUT_MS)
    assert _seqs(seen) == [0, 1]
    reader.close()


def test_a_bad_line_is_reported_in_its_place(qtbot: QtBot) -> None:
    reader = FrameReader()
    seen: list[Decoded] = []
    reader.frames_decoded.connect(seen.extend)
    reader.feed(_line(0) + b"{oops\n" + _line(1))
    qtbot.waitUntil(lambda: len(seen) == 3, timeout=TIMEOUT_MS)
    assert isinstance(seen[1], FrameError)
    assert _seqs([seen[0], seen[2]]) == [0, 1]
    reader.close()


def test_an_idle_reader_ends_its_thread_and_starts_one_again_on_input(qtbot: QtBot) -> None:
    reader = FrameReader(idle_s=0.05)
    seen: list[Decoded] = []
    reader.frames_decoded.connect(seen.extend)
    reader.feed(_line(0))
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: reader._thread is None, timeout=TIMEOUT_MS)
    reader.feed(_line(1))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=TIMEOUT_MS)
    assert _seqs(seen) == [0, 1]
    reader.close()
