"""A small scripted sidecar speaking the real wire protocol, for the desktop's tests.

Run as `python tests/desktop/fake_sidecar.py`. Threads live in `$ATRIUM_DATA_DIR/fake.json`, so
they survive a crash and restart. The text of `run/start` picks the script:

- `crash`: exit with code 3 without replying (after writing to stderr).
- `garbage`: write malformed lines, then run the echo turn.
- `approve`: a tool call that waits for approval (with a diff), run finishes interrupted.
- `ask`: a question with choices, run finishes interrupted.
- `fail`: the run fails.
- anything else: echo turn, streaming "You said: <text>" token by token.

Env: `FAKE_SIDECAR_EXIT_AT_START=<code>` exits at once; `FAKE_SIDECAR_BAD_PING=1` answers `ping`
with a result that does not match its model.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from sidecar.protocol import (
    PROTOCOL_VERSION,
    ApprovalInterrupt,
    ErrorCode,
    ErrorInfo,
    InitializeResult,
    InterruptEvent,
    MessageEvent,
    MessageInfo,
    QuestionInterrupt,
    RunEventBody,
    RunEventParams,
    RunFailed,
    RunFinished,
    RunStarted,
    SettingsInfo,
    ThreadInfo,
    Token,
    ToolCall,
    ToolResult,
)

DATA = Path(os.environ.get("ATRIUM_DATA_DIR", ".")) / "fake.json"


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def write(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


class FakeSidecar:
    def __init__(self) -> None:
        self.db: dict[str, Any] = (
            json.loads(DATA.read_text()) if DATA.exists() else {"threads": {}, "settings": {}}
        )
        self.initialized = False

    def save(self) -> None:
        DATA.write_text(json.dumps(self.db))

    def thread(self, thread_id: str) -> dict[str, Any]:
        if thread_id not in self.db["threads"]:
            raise Failure(ErrorCode.THREAD_NOT_FOUND, "no such thread")
        return self.db["threads"][thread_id]

    def info(self, thread: dict[str, Any]) -> dict[str, Any]:
        keys = ("id", "title", "status", "created_at", "updated_at")
        return ThreadInfo.model_validate({k: thread[k] for k in keys}).model_dump(mode="json")

    def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            self.initialized = True
            return InitializeResult(
                protocol_version=PROTOCOL_VERSION,
                server_version="fake",
                data_dir=str(DATA.parent),
                model_configured=False,
            ).model_dump(mode="json")
        if not self.initialized:
            raise Failure(ErrorCode.NOT_INITIALIZED, "initialize first")
        handler = getattr(self, "do_" + method.replace("/", "_"), None)
        if handler is None:
            raise Failure(ErrorCode.METHOD_NOT_FOUND, f"no method {method}")
        return handler(params)

    def do_ping(self, _params: dict[str, Any]) -> Any:
        return {"unexpected": True} if os.environ.get("FAKE_SIDECAR_BAD_PING") else {}

    def do_thread_create(self, params: dict[str, Any]) -> Any:
        now = time.time()
        thread_id = uuid.uuid4().hex[:8]
        self.db["threads"][thread_id] = {
            "id": thread_id,
            "title": params.get("title", "New thread"),
            "status": "idle",
            "created_at": now,
            "updated_at": now,
            "messages": [],
            "interrupts": [],
        }
        self.save()
        return self.info(self.db["threads"][thread_id])

    def do_thread_list(self, _params: dict[str, Any]) -> Any:
        threads = sorted(self.db["threads"].values(), key=lambda t: -t["created_at"])
        return {"threads": [self.info(t) for t in threads]}

    def do_thread_get(self, params: dict[str, Any]) -> Any:
        thread = self.thread(params["thread_id"])
        return {
            "thread": self.info(thread),
            "messages": thread["messages"],
            "interrupts": thread["interrupts"],
            "status": thread["status"],
            "last_error": thread.get("last_error"),
        }

    def do_thread_rename(self, params: dict[str, Any]) -> Any:
        thread = self.thread(params["thread_id"])
        thread["title"] = params["title"]
        self.save()
        return self.info(thread)

    def do_thread_delete(self, params: dict[str, Any]) -> Any:
        self.thread(params["thread_id"])
        del self.db["threads"][params["thread_id"]]
        self.save()
        return {}

    def do_settings_get(self, _params: dict[str, Any]) -> Any:
        settings = self.db["settings"]
        return SettingsInfo(
            model=settings.get("model"),
            api_base=settings.get("api_base"),
            workspace=settings.get("workspace", "/tmp/workspace"),
            has_api_key=bool(settings.get("api_key")),
            model_source="settings" if settings.get("model") else "none",
        ).model_dump(mode="json")

    def do_settings_set(self, params: dict[str, Any]) -> Any:
        self.db["settings"].update(params)
        self.save()
        return self.do_settings_get({})

    def do_run_cancel(self, params: dict[str, Any]) -> Any:
        self.thread(params["thread_id"])
        return {}

    def do_run_start(self, params: dict[str, Any]) -> Any:
        thread = self.thread(params["thread_id"])
        text = params["text"]
        if text == "crash":
            sys.stderr.write("fake sidecar: crashing as asked\n")
            sys.stderr.flush()
            os._exit(3)
        run = Run(self, thread)
        return {"run_id": run.id}, lambda: run.script(text)

    def do_run_resume(self, params: dict[str, Any]) -> Any:
        thread = self.thread(params["thread_id"])
        pending = [i for i in thread["interrupts"] if i["id"] == params["interrupt_id"]]
        if not pending:
            raise Failure(ErrorCode.NO_SUCH_INTERRUPT, "no such interrupt")
        thread["interrupts"].remove(pending[0])
        thread.setdefault("answers", []).append(params["value"])
        run = Run(self, thread)
        return {"run_id": run.id}, lambda: run.resume(pending[0], params["value"])

    def do_run_retry(self, params: dict[str, Any]) -> Any:
        run = Run(self, self.thread(params["thread_id"]))
        return {"run_id": run.id}, lambda: run.echo("retried")

    def do_shutdown(self, _params: dict[str, Any]) -> Any:
        return {}, lambda: sys.exit(0)


class Run:
    def __init__(self, fake: FakeSidecar, thread: dict[str, Any]) -> None:
        self.fake, self.thread = fake, thread
        self.id = uuid.uuid4().hex[:8]
        self.seq = 0

    def emit(self, event: RunEventBody) -> None:
        params = RunEventParams(
            run_id=self.id, thread_id=self.thread["id"], seq=self.seq, event=event
        )
        self.seq += 1
        write({"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump(mode="json")})

    def message(self, role: str, content: str, **extra: Any) -> MessageInfo:
        info = MessageInfo.model_validate(
            {
                "id": uuid.uuid4().hex[:8],
                "thread_id": self.thread["id"],
                "role": role,
                "content": content,
                "created_at": time.time(),
                **extra,
            }
        )
        self.thread["messages"].append(info.model_dump(mode="json"))
        return info

    def finish(self, event: RunEventBody, status: str, error: str | None = None) -> None:
        self.thread["status"], self.thread["last_error"] = status, error
        self.fake.save()
        self.emit(event)

    def script(self, text: str) -> None:
        self.thread["status"] = "running"
        self.emit(RunStarted())
        self.emit(MessageEvent(message=self.message("user", text)))
        if text == "garbage":
            sys.stdout.write('this is not json\n[1, 2, 3]\n{"jsonrpc": "2.0"}\n')
            sys.stdout.flush()
        if text == "approve":
            self.approve()
        elif text == "ask":
            self.ask()
        elif text == "fail":
            self.finish(
                RunFailed(error=ErrorInfo(code="boom", message="it broke")), "failed", "it broke"
            )
        else:
            self.echo(f"You said: {text}")

    def echo(self, answer: str) -> None:
        for word in answer.split(" "):
            self.emit(Token(text=word + " "))
        self.emit(MessageEvent(message=self.message("assistant", answer)))
        self.finish(RunFinished(), "idle")

    def approve(self) -> None:
        call = {
            "id": "call-1",
            "server": "workspace",
            "tool": "write",
            "arguments": {"path": "draft.md", "content": "hello\n"},
        }
        self.emit(MessageEvent(message=self.message("assistant", "", tool_calls=[call])))
        self.emit(
            ToolCall(
                call_id="call-1", server="workspace", tool="write", arguments=call["arguments"]
            )
        )
        interrupt = ApprovalInterrupt(
            id="int-" + self.id,
            title="Write draft.md",
            body="The agent wants to write a file.",
            server="workspace",
            tool="write",
            arguments=call["arguments"],
            call_id="call-1",
            diff="--- a/draft.md\n+++ b/draft.md\n@@ -0,0 +1 @@\n+hello\n",
        )
        self.pause(interrupt)

    def ask(self) -> None:
        interrupt = QuestionInterrupt(
            id="int-" + self.id,
            title="A question",
            body="",
            question="Which colour?",
            choices=("red", "blue"),
        )
        self.pause(interrupt)

    def pause(self, interrupt: ApprovalInterrupt | QuestionInterrupt) -> None:
        self.thread["interrupts"].append(interrupt.model_dump(mode="json"))
        self.emit(InterruptEvent(interrupt=interrupt))
        self.finish(RunFinished(outcome="interrupted"), "interrupted")

    def resume(self, interrupt: dict[str, Any], value: dict[str, Any]) -> None:
        self.thread["status"] = "running"
        self.emit(RunStarted(resumed=True))
        if interrupt["kind"] == "approval":
            denied = value.get("decision") == "deny"
            content = f"denied: {value.get('reason', '')}" if denied else "wrote draft.md"
            self.message("tool", content, tool_call_id=interrupt["call_id"], is_error=denied)
            self.emit(ToolResult(call_id=interrupt["call_id"], is_error=denied, content=content))
            self.echo("Done." if not denied else "Not written.")
        else:
            self.echo(f"You chose {value.get('answer')}")


def serve() -> None:
    exit_code = os.environ.get("FAKE_SIDECAR_EXIT_AT_START")
    if exit_code:
        sys.stderr.write("fake sidecar: exiting at start as asked\n")
        sys.exit(int(exit_code))
    fake = FakeSidecar()
    for line in sys.stdin:
        if not line.strip():
            continue
        frame = json.loads(line)
        if "id" not in frame:
            continue
        after = None
        try:
            result = fake.handle(frame["method"], frame.get("params") or {})
            if isinstance(result, tuple):
                result, after = result
            write({"jsonrpc": "2.0", "id": frame["id"], "result": result})
        except Failure as failure:
            error = {"code": int(failure.code), "message": str(failure)}
            write({"jsonrpc": "2.0", "id": frame["id"], "error": error})
        if after is not None:
            after()


if __name__ == "__main__":
    serve()
