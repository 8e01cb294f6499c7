"""A fake strong-agent CLI that replays a recorded transcript on stdout (stdlib only).

Run as `python fake_cli.py <the real CLI's arguments>`; the mode follows the arguments:
`--input-format` -> Claude Code stream-json, `exec` -> Codex, `agent` -> OpenClaw.
Behaviour is set through environment variables:

FAKE_CLI_TRANSCRIPT  file whose lines are written to stdout
FAKE_CLI_LOG         JSONL log: argv (+ whether stdin is /dev/null), every stdin line, child pid
FAKE_CLI_DELAY       pause between lines in seconds (default 0.01)
FAKE_CLI_HANG_AFTER  stop after N lines and wait (for an interrupt, EOF or a signal)
FAKE_CLI_RESUME_FAILS  exit 1 with a "not found" message when asked to resume
FAKE_CLI_MISSING_SESSION  (OpenClaw) the same when `--session-id` names this session
FAKE_CLI_IGNORE_SIGNALS  ignore SIGINT and SIGTERM (only SIGKILL works)
FAKE_CLI_SPAWN_CHILD  start a grandchild that ignores SIGINT/SIGTERM and holds stdout open
FAKE_CLI_READY_SOCKET  connect to this Unix socket once set up (signals); the grandchild
                     connects too, once it ignores the signals
FAKE_CLI_EXTRA_LINES  after the first line, write a blank line, a non-JSON line and a 2 MiB line
FAKE_CLI_EXIT_CODE   exit code after a normal replay (default 0)
FAKE_CLI_LINGER      (Claude) keep running after stdin closes (a CLI hanging after its result)
FAKE_CLI_AFTER_INTERRUPT  (Claude) what follows an interrupt instead of the aborted result:
                     `continue` replays the rest of the transcript (its own result included),
                     `exit:N` acknowledges and exits with code N at once, printing nothing more
FAKE_CLI_RELEASE_AFTER_MESSAGES  (Claude) the FAKE_CLI_HANG_AFTER wait also ends once this many
                     user messages beyond the prompt have arrived

In Claude mode it waits for the user message on stdin, blocks at every `can_use_tool` control
request until the matching `control_response` arrives, answers an `interrupt` control request
by ending the turn with an aborted result, and exits when stdin closes. User messages that
arrive after the prompt are queued, as Claude Code 2.1.197 does: after the transcript's result
all those waiting are taken together as one more turn (`init`, an assistant text
`noted: <their texts joined by newlines>`, a success result with that text), and so on until
stdin closes. With `--replay-user-messages` each message is echoed as it is taken (`isReplay`,
its `uuid`; the prompt after the first line, a batch's last one with the joined text), as the
real CLI does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

BIG_TEXT_BYTES = 2 * 1024 * 1024
_write_lock = threading.Lock()


def log(record: dict[str, Any]) -> None:
    path = os.environ.get("FAKE_CLI_LOG")
    if path:
        with _write_lock, open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def emit(line: str) -> None:
    with _write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def stdin_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(0), os.stat(os.devnull))
    except OSError:
        return False


def transcript_lines() -> list[str]:
    path = os.environ.get("FAKE_CLI_TRANSCRIPT")
    if not path:
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if os.environ.get("FAKE_CLI_EXTRA_LINES") and lines:
        big = {
            "type": "assistant",
            "message": {
                "id": "msg_big",
                "role": "assistant",
                "content": [{"type": "text", "text": "x" * BIG_TEXT_BYTES}],
            },
            "parent_tool_use_id": None,
            "session_id": "big",
        }
        lines[1:1] = ["", "[SandboxDebug] not json at all", json.dumps(big)]
    return lines


def setup_process() -> None:
    if os.environ.get("FAKE_CLI_IGNORE_SIGNALS"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("FAKE_CLI_SPAWN_CHILD"):
        code = (
            "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "import fake_cli; fake_cli.announce_ready(); time.sleep(600)"
        )
        child = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).parent)
        log({"kind": "child", "pid": child.pid})
    announce_ready()


def announce_ready() -> None:
    path = os.environ.get("FAKE_CLI_READY_SOCKET")
    if path:
        with socket.socket(socket.AF_UNIX) as ready:
            ready.connect(path)


def resume_refused(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    sys.exit(1)


class ClaudeStdin(threading.Thread):
    """Reads the host's stdin lines: prompt, control responses, interrupts, EOF."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.prompt = threading.Event()
        self.interrupted = threading.Event()
        self.eof = threading.Event()
        self.changed = threading.Condition()
        self.responses: dict[str, dict[str, Any]] = {}
        self.first: dict[str, Any] = {}
        self.queued: list[dict[str, Any]] = []

    def run(self) -> None:
        for raw in sys.stdin:
            line = raw.rstrip("\n")
            log({"kind": "stdin", "line": line})
            try:
                message = json.loads(line)
            except ValueError:
                continue
            self._dispatch(message)
        self.eof.set()
        self.interrupted.set()  # nothing more will come: stop waiting on anything
        with self.changed:
            self.changed.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "user":
            with self.changed:
                if self.prompt.is_set():
                    self.queued.append(message)
                else:
                    self.first = message
                    self.prompt.set()
                self.changed.notify_all()
        elif kind == "control_response":
            response = message.get("response", {})
            with self.changed:
                self.responses[response.get("request_id", "")] = response
                self.changed.notify_all()
        elif kind == "control_request" and message["request"].get("subtype") == "interrupt":
            ack = {"subtype": "success", "request_id": message["request_id"], "response": {}}
            emit(json.dumps({"type": "control_response", "response": ack}))
            self.interrupted.set()
            with self.changed:
                self.changed.notify_all()

    def wait_response(self, request_id: str) -> None:
        with self.changed:
            self.changed.wait_for(
                lambda: request_id in self.responses or self.interrupted.is_set(), timeout=60
            )

    def wait_released(self, messages: int | None) -> None:
        """Hang until an interrupt or EOF, or until `messages` user messages are queued."""
        with self.changed:
            self.changed.wait_for(
                lambda: (
                    self.interrupted.is_set()
                    or (messages is not None and len(self.queued) >= messages)
                )
            )

    def take_queued(self) -> list[dict[str, Any]]:
        """Every queued user message, waiting for one unless stdin closes first."""
        with self.changed:
            self.changed.wait_for(lambda: bool(self.queued) or self.eof.is_set())
            taken, self.queued = self.queued, []
        return taken


def aborted_result(session_id: str) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "duration_ms": 5,
            "num_turns": 1,
            "session_id": session_id,
            "terminal_reason": "aborted_tools",
            "errors": [],
        }
    )


def replay_line(message: dict[str, Any], session_id: str, text: str | None = None) -> str:
    """The echo of a user message the CLI took (`--replay-user-messages`)."""
    content = message.get("message", {}).get("content") if text is None else text
    return json.dumps(
        {
            "type": "user",
            "message": {"role": "user", "content": content},
            "session_id": session_id,
            "parent_tool_use_id": None,
            "uuid": message.get("uuid"),
            "isReplay": True,
        }
    )


def follow_up_turn(
    batch: list[dict[str, Any]], session_id: str, replay: bool, delay: float
) -> None:
    """Take the queued messages as one turn, as Claude Code does after a result."""
    texts = [str(m.get("message", {}).get("content")) for m in batch]
    joined = "\n".join(texts)
    lines: list[str] = []
    if replay:
        lines += [replay_line(m, session_id) for m in batch[:-1]]
    lines.append(json.dumps({"type": "system", "subtype": "init", "session_id": session_id}))
    if replay:
        lines.append(replay_line(batch[-1], session_id, joined))
    answer = f"noted: {joined}"
    block = {"type": "text", "text": answer}
    message = {"id": f"msg_follow_{len(texts)}", "role": "assistant", "content": [block]}
    lines.append(json.dumps({"type": "assistant", "message": message, "session_id": session_id}))
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": answer,
        "session_id": session_id,
        "terminal_reason": "completed",
    }
    lines.append(json.dumps(result))
    for line in lines:
        emit(line)
        threading.Event().wait(delay)


def run_claude(argv: list[str]) -> int:
    if "--resume" in argv and os.environ.get("FAKE_CLI_RESUME_FAILS"):
        session = argv[argv.index("--resume") + 1]
        resume_refused(f"No conversation found with session ID: {session}")
    stdin = ClaudeStdin()
    stdin.start()
    stdin.prompt.wait(timeout=30)
    delay = float(os.environ.get("FAKE_CLI_DELAY", "0.01"))
    hang_after = os.environ.get("FAKE_CLI_HANG_AFTER")
    release = os.environ.get("FAKE_CLI_RELEASE_AFTER_MESSAGES")
    replay = "--replay-user-messages" in argv
    session_id = "fake-session"
    for index, line in enumerate(transcript_lines()):
        if index == 1 and replay:  # the real CLI echoes its prompt after the `init` line
            emit(replay_line(stdin.first, session_id))
        if hang_after is not None and index >= int(hang_after):
            stdin.wait_released(int(release) if release else None)
        if stdin.interrupted.is_set():
            after = os.environ.get("FAKE_CLI_AFTER_INTERRUPT", "")
            if after.startswith("exit:"):
                os._exit(int(after[5:]))
            if after != "continue":
                if not stdin.eof.is_set():
                    emit(aborted_result(session_id))
                break
        emit(line)
        message = _json_or_none(line)
        session_id = message.get("session_id", session_id) if message else session_id
        request = message.get("request", {}) if message else {}
        if message and message.get("type") == "control_request" and request:
            stdin.wait_response(message["request_id"])
        stdin.interrupted.wait(delay)
    while not stdin.interrupted.is_set() and (batch := stdin.take_queued()):
        follow_up_turn(batch, session_id, replay, delay)
    stdin.eof.wait()
    if os.environ.get("FAKE_CLI_LINGER"):
        threading.Event().wait()
    return int(os.environ.get("FAKE_CLI_EXIT_CODE", "0"))


def run_streaming(argv: list[str]) -> int:
    """Codex and OpenClaw: stdout only; stdin must not be needed."""
    if "resume" in argv and os.environ.get("FAKE_CLI_RESUME_FAILS"):
        thread = argv[argv.index("resume") + 1]
        resume_refused(
            "Error: thread/resume: thread/resume failed: "
            f"no rollout found for thread id {thread} (code -32600)\n\nStack backtrace:\n"
            "   0: <unknown>"
        )
    missing = os.environ.get("FAKE_CLI_MISSING_SESSION")
    if missing and "--session-id" in argv and argv[argv.index("--session-id") + 1] == missing:
        resume_refused(f"Error: session {missing} not found")
    if not os.environ.get("FAKE_CLI_IGNORE_SIGNALS"):
        signal.signal(signal.SIGINT, lambda _sig, _frame: os._exit(130))
    delay = float(os.environ.get("FAKE_CLI_DELAY", "0.01"))
    hang_after = os.environ.get("FAKE_CLI_HANG_AFTER")
    never = threading.Event()
    for index, line in enumerate(transcript_lines()):
        if hang_after is not None and index >= int(hang_after):
            never.wait()
        emit(line)
        never.wait(delay)
    return int(os.environ.get("FAKE_CLI_EXIT_CODE", "0"))


def _json_or_none(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def main() -> int:
    argv = sys.argv[1:]
    log({"kind": "argv", "argv": argv, "stdin_devnull": stdin_is_devnull(), "pid": os.getpid()})
    setup_process()
    if "--input-format" in argv:
        return run_claude(argv)
    return run_streaming(argv)


if __name__ == "__main__":
    sys.exit(main())
