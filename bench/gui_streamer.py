"""A paced token source for `bench gui`: speaks the sidecar's wire protocol on stdio.

`python -m bench.gui_streamer TOKENS RATE` answers `initialize`, `thread/list`, `thread/get`,
`thread/create` and `run/start` (other requests get METHOD_NOT_FOUND), and streams a run's
answer as one `run/event` token notification per token at RATE tokens/s, written in the real
format, the way a sidecar without coalescing does. The final `message` event's `created_at` is
the `time.monotonic()` at which the last token was written (the clock is system-wide on Linux),
so the window can tell how late it showed that token. The window under test is real; only the
model and the sidecar's graph are left out, so what is measured is the window alone.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from sidecar.protocol import (
    MessageEvent,
    MessageInfo,
    RunEventParams,
    RunFinished,
    RunStarted,
    Token,
    WireModel,
)

THREAD = {"id": "bench", "title": "Bench", "status": "idle", "created_at": 1.0, "updated_at": 1.0}
TICK_S = 0.004


def bench_tokens(count: int) -> list[str]:
    """Words of a few characters with a paragraph break every 60 tokens, like model output."""
    return [f"w{n % 9973}" + ("\n\n" if n % 60 == 59 else " ") for n in range(count)]


class Streamer:
    def __init__(self, tokens: int, rate: float) -> None:
        self.tokens = bench_tokens(tokens)
        self.rate = rate
        self._lock = threading.Lock()

    def write(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":")) + "\n"
        with self._lock:
            sys.stdout.write(data)
            sys.stdout.flush()

    def reply(self, request_id: object, result: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def event(self, seq: int, event: WireModel) -> str:
        params = RunEventParams(run_id="run-1", thread_id="bench", seq=seq, event=event)  # type: ignore[arg-type]
        body = {"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump(mode="json")}
        return json.dumps(body, separators=(",", ":")) + "\n"

    def handle(self, frame: dict[str, Any]) -> None:
        method, request_id = frame.get("method"), frame.get("id")
        if request_id is None:
            return
        answers: dict[str, dict[str, Any]] = {
            "initialize": {
                "protocol_version": "1.0",
                "server_version": "bench",
                "data_dir": "",
                "model_configured": True,
            },
            "thread/list": {"threads": [THREAD]},
            "thread/create": THREAD,
            "thread/get": {"thread": THREAD, "messages": [], "interrupts": [], "status": "idle"},
            "run/start": {"run_id": "run-1"},
            "shutdown": {},
        }
        if method in answers:
            self.reply(request_id, answers[method])
            if method == "run/start":
                threading.Thread(target=self.stream, daemon=True).start()
            elif method == "shutdown":
                sys.exit(0)
        else:
            error = {"code": -32601, "message": f"{method} is not served by the bench"}
            self.write({"jsonrpc": "2.0", "id": request_id, "error": error})

    def stream(self) -> None:
        with self._lock:
            sys.stdout.write(self.event(0, RunStarted()))
        started = time.monotonic()
        sent = 0
        lines = [self.event(n + 1, Token(text=t)) for n, t in enumerate(self.tokens)]
        while sent < len(lines):
            due = min(len(lines), int((time.monotonic() - started) * self.rate) + 1)
            if due > sent:
                with self._lock:
                    sys.stdout.write("".join(lines[sent:due]))
                    sys.stdout.flush()
                sent = due
            time.sleep(TICK_S)
        last_written = time.monotonic()
        text = "".join(self.tokens)
        message = MessageInfo(
            id="answer", thread_id="bench", role="assistant", content=text, created_at=last_written
        )
        seq = len(lines) + 1
        with self._lock:
            sys.stdout.write(self.event(seq, MessageEvent(message=message)))
            sys.stdout.write(self.event(seq + 1, RunFinished()))
            sys.stdout.flush()


def main() -> None:
    streamer = Streamer(int(sys.argv[1]), float(sys.argv[2]))
    for line in sys.stdin:
        if line.strip():
            streamer.handle(json.loads(line))


if __name__ == "__main__":
    main()
