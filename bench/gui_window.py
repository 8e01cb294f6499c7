"""The measuring side of `bench gui`: the real window (offscreen) in a process of its own.

`python -m bench.gui_window stream TOKENS RATE` streams TOKENS tokens at RATE tokens/s from
`bench.gui_streamer` into the window; `python -m bench.gui_window open MESSAGES` seeds a thread
of MESSAGES messages into a fresh database and opens it in the window over the real sidecar.
Each prints one JSON object of figures on its last line.

GUI-thread stalls are read off a 5 ms precise timer: every gap between two ticks beyond 5 ms is
time the event loop could not run. The same sampler over an idle second first gives the
machine's own noise floor, printed beside the figures.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from bench.gui_streamer import bench_tokens
from desktop.app import DesktopApp, build_desktop, freeze_start_up
from desktop.ipc.process import SidecarProcess
from desktop.models.transcript import MessageEntry
from sidecar.protocol import RunEventParams
from sidecar.store import Store, open_database

TICK_MS = 5
IDLE_S = 1.0


class StallSampler(QObject):
    """Records the gaps between ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.stalls: list[float] = []
        self._last = 0.0

    def start(self) -> None:
        self.stalls = []
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> list[float]:
        self.timer.stop()
        return self.stalls

    def _on_timer_timeout(self) -> None:
        now = time.perf_counter()
        self.stalls.append(max(0.0, now - self._last - TICK_MS / 1000))
        self._last = now


def p99(samples: list[float]) -> float:
    ordered = sorted(samples) or [0.0]
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def wait_until(app: QApplication, condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.001)
    return True


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def idle_floor(app: QApplication, sampler: StallSampler) -> float:
    sampler.start()
    wait_until(app, lambda: False, IDLE_S)
    return max(sampler.stop(), default=0.0)


def measure_stream(tokens: int, rate: float) -> dict[str, Any]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    process = SidecarProcess(sys.executable, ["-m", "bench.gui_streamer", str(tokens), str(rate)])
    desktop = build_desktop(process=process)
    freeze_start_up()
    desktop.window.resize(1200, 800)
    desktop.window.show()
    desktop.start()
    state = desktop.state
    wait_until(app, lambda: state.selected_thread_id == "bench" and not state.loading, 30)
    sampler = StallSampler()
    floor = idle_floor(app, sampler)
    rss_before = rss_bytes()
    expected = "".join(bench_tokens(tokens))
    shown_at: list[float] = []
    last_written: list[float] = []

    def on_event(params: RunEventParams) -> None:
        if params.event.type == "message":
            last_written.append(params.event.message.created_at)

    desktop.client.run_event_received.connect(on_event)
    view = desktop.window.transcript
    flush = view.flush

    def timed_flush() -> None:
        flush()
        if not shown_at and any(s.fed >= len(expected) for s in view.docs.streams.values()):
            shown_at.append(time.monotonic())

    view.flush = timed_flush  # type: ignore[method-assign]
    sampler.start()
    started = time.monotonic()
    desktop.controller.send_message("Stream, please")
    done = wait_until(app, lambda: state.run_state().status == "idle" and last_written, 600)
    wait_until(app, lambda: bool(shown_at), 5)
    stalls = sampler.stop()
    elapsed = time.monotonic() - started
    entry = state.transcript.entries[-1]
    exact = isinstance(entry, MessageEntry) and entry.text == expected
    result = {
        "tokens": tokens,
        "rate": rate,
        "completed": bool(done),
        "exact": exact,
        "elapsed_s": elapsed,
        "worst_stall_s": max(stalls, default=0.0),
        "p99_stall_s": p99(stalls),
        "idle_worst_stall_s": floor,
        "last_token_lag_s": (shown_at[0] - last_written[0]) if shown_at and last_written else -1,
        "rss_bytes": rss_bytes(),
        "rss_before_bytes": rss_before,
    }
    shut_down(desktop)
    return result


def seed(data_dir: Path, messages: int) -> str:
    store = Store(open_database(data_dir / "atrium.db"))
    try:
        big = store.create_thread(f"{messages} messages")
        with store.transaction():
            store.conn.executemany(
                "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
                (
                    (
                        f"m{n}",
                        big.id,
                        "user" if n % 2 == 0 else "assistant",
                        f"Message {n}: " + "some words of a conversation " * (1 + n % 7),
                        float(n),
                    )
                    for n in range(messages)
                ),
            )
        store.create_thread("Newest, small")  # selected at start: the big one is opened later
        return big.id
    finally:
        store.db.close()


class FirstPaint(QObject):
    """Notes when the transcript's viewport was first painted once `ready()` holds."""

    def __init__(self, ready: Any) -> None:
        super().__init__()
        self.ready = ready
        self.painted_at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.painted_at is None and self.ready():
            QTimer.singleShot(0, self._note)
        return False

    def _note(self) -> None:
        if self.painted_at is None:
            self.painted_at = time.perf_counter()


def measure_open(messages: int) -> dict[str, Any]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    with tempfile.TemporaryDirectory(prefix="atrium-bench-gui-") as folder:
        data_dir = Path(folder)
        big = seed(data_dir, messages)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
        desktop = build_desktop(data_dir, env)
        freeze_start_up()
        desktop.window.resize(1200, 800)
        desktop.window.show()
        desktop.start()
        state = desktop.state
        wait_until(app, lambda: state.selected_thread_id is not None and not state.loading, 60)
        wait_until(app, lambda: False, 1.0)  # the other start-up replies settle
        sampler = StallSampler()
        floor = idle_floor(app, sampler)
        painted = FirstPaint(lambda: not state.loading and len(state.transcript) > 0)
        viewport = desktop.window.transcript.list_view.viewport()
        viewport.installEventFilter(painted)
        sampler.start()
        started = time.perf_counter()
        desktop.controller.select_thread(big)
        loaded = wait_until(app, lambda: not state.loading and len(state.transcript) > 0, 60)
        wait_until(app, lambda: painted.painted_at is not None, 10)
        wait_until(app, lambda: False, 0.3)  # stalls right after the first paint count too
        stalls = sampler.stop()
        first_paint = (painted.painted_at or time.perf_counter()) - started
        result = {
            "messages": messages,
            "loaded": bool(loaded),
            "first_paint_s": first_paint,
            "worst_stall_s": max(stalls, default=0.0),
            "idle_worst_stall_s": floor,
            "rows": len(state.transcript),
        }
        shut_down(desktop)
    return result


def shut_down(desktop: DesktopApp) -> None:
    desktop.shutdown()
    desktop.window.close()


def main() -> None:
    mode = sys.argv[1]
    if mode == "stream":
        result = measure_stream(int(sys.argv[2]), float(sys.argv[3]))
    else:
        result = measure_open(int(sys.argv[2]))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
