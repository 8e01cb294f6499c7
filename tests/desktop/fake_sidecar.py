"""A small scripted sidecar speaking the real wire protocol, for the desktop's tests.

Run as `python tests/desktop/fake_sidecar.py`. Threads live in `$ATRIUM_DATA_DIR/fake.json`, so
they survive a crash and restart. The text of `run/start` picks the script:

- `crash`: exit with code 3 without replying (after writing to stderr).
- `garbage`: write malformed lines, then run the echo turn.
- `approve`: a tool call that waits for approval (with a diff), run finishes interrupted.
- `ask`: a question with choices, run finishes interrupted.
- `fail`: the run fails.
- `plan`, `stall`, `two`: coordinator scripts (plans, escalation, subagent interrupts) from
  `fake_coord.py`, which also answers `profile/*`, `plan/get`, `task/*` and
  `thread/set_autonomous`.
- anything else: echo turn, streaming "You said: <text>" token by token.

MCP servers and grants (`server/*`, `grant/*`) are canned: a built-in `workspace`, a ready
`time` server and a crashed `broken` one (its test fails), plus two standing grants. Actions that
change a server reply at once and then send a `server/status` notification (`restart` goes
`starting`, then `ready`, or `crashed` for `broken`). Prompts and resources of the `ready`
servers (`prompt/*`, `resource/*`) come from `fake_features.py`.

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

# Next to this script, which runs by path (so its directory is on sys.path).
from fake_coord import SCRIPTS, FakeCoord
from fake_features import Failure, FakeFeatures

from sidecar.protocol import (
    PROTOCOL_VERSION,
    ApprovalInterrupt,
    ErrorCode,
    ErrorInfo,
    GrantInfo,
    InitializeResult,
    InterruptEvent,
    LaunchPreviewInfo,
    MessageEvent,
    MessageInfo,
    QuestionInterrupt,
    RunEventBody,
    RunEventParams,
    RunFailed,
    RunFinished,
    RunStarted,
    ServerConfigInfo,
    ServerInfo,
    ServerStatusParams,
    ServerTestResult,
    SettingsInfo,
    ThreadInfo,
    Token,
    ToolCall,
    ToolResult,
)

DATA = Path(os.environ.get("ATRIUM_DATA_DIR", ".")) / "fake.json"


def write(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


class FakeSidecar:
    def __init__(self) -> None:
        self.db: dict[str, Any] = (
            json.loads(DATA.read_text()) if DATA.exists() else {"threads": {}, "settings": {}}
        )
        self.servers: dict[str, dict[str, Any]] = canned_servers()
        self.grants: list[dict[str, Any]] = canned_grants()
        self.secrets: set[str] = set()
        self.features = FakeFeatures(
            lambda: [name for name, entry in self.servers.items() if entry["state"] == "ready"]
        )
        self.coord = FakeCoord(self.db, self.thread, lambda thread: Run(self, thread), Failure)
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
        handler = handler or self.features.handler(method) or self.coord.handler(method)
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

    def server(self, name: str) -> dict[str, Any]:
        if name not in self.servers:
            raise Failure(ErrorCode.SERVER_NOT_FOUND, f"no server {name}")
        return self.servers[name]

    def server_info(self, name: str) -> dict[str, Any]:
        return ServerInfo.model_validate(self.servers[name]).model_dump(mode="json")

    def status(self, name: str, removed: bool = False, **changes: Any) -> None:
        """Change a server's fields, then send the `server/status` notification."""
        entry = self.servers.pop(name) if removed else self.servers[name]
        entry.update(changes)
        params = ServerStatusParams(server=ServerInfo.model_validate(entry), removed=removed)
        write(
            {"jsonrpc": "2.0", "method": "server/status", "params": params.model_dump(mode="json")}
        )

    def do_server_list(self, _params: dict[str, Any]) -> Any:
        issue = {"message": "unknown key 'colour'", "server": "broken", "field": "colour"}
        servers = [self.server_info(name) for name in self.servers]
        return {"servers": servers, "config_issues": [issue], "config_path": "/tmp/mcp.json"}

    def do_server_add(self, params: dict[str, Any]) -> Any:
        config = ServerConfigInfo.model_validate(params["config"])
        if config.name in self.servers:
            raise Failure(ErrorCode.SERVER_EXISTS, f"{config.name} exists")
        self.servers[config.name] = server_entry(config, "starting")
        return self.server_info(config.name), lambda: self.status(config.name, state="ready")

    def do_server_update(self, params: dict[str, Any]) -> Any:
        config = ServerConfigInfo.model_validate(params["config"])
        self.server(config.name)
        self.servers[config.name] = server_entry(config, "starting")
        return self.server_info(config.name), lambda: self.status(config.name, state="ready")

    def do_server_remove(self, params: dict[str, Any]) -> Any:
        self.server(params["name"])
        return {}, lambda: self.status(params["name"], removed=True)

    def do_server_set_enabled(self, params: dict[str, Any]) -> Any:
        entry = self.server(params["name"])
        entry["enabled"] = params["enabled"]
        entry["state"] = "ready" if params["enabled"] else "disabled"
        return self.server_info(params["name"])

    def do_server_restart(self, params: dict[str, Any]) -> Any:
        name = params["name"]
        entry = self.server(name)
        entry.update(state="starting", error=None, restarts=entry["restarts"] + 1)
        final = "crashed" if name == "broken" else "ready"
        error = "exited with code 1" if name == "broken" else None
        return self.server_info(name), lambda: self.status(name, state=final, error=error)

    def do_server_logs(self, params: dict[str, Any]) -> Any:
        self.server(params["name"])
        protocol = [
            {"at": 1.0, "direction": "host", "text": "starting"},
            {"at": 2.0, "direction": "out", "text": "initialize"},
            {"at": 3.0, "direction": "in", "text": "initialize result"},
        ]
        return {"stderr": [f"{params['name']}: listening on stdio"], "protocol": protocol}

    def do_server_preview(self, params: dict[str, Any]) -> Any:
        if params.get("config"):
            config = ServerConfigInfo.model_validate(params["config"])
        else:
            config = ServerConfigInfo.model_validate(self.server(params["name"])["config"])
        found = config.command not in (None, "missing-binary")
        return LaunchPreviewInfo(
            transport="http" if config.url else "stdio", command=config.command,
            resolved_command=f"/usr/bin/{config.command}" if found else None, args=config.args,
            cwd=config.cwd, path=("/usr/local/bin", "/usr/bin"), env_keys=tuple(config.env),
            url=config.url, header_keys=tuple(config.headers), placeholders=(),
            problems=() if found else (f"{config.command} is not on PATH",),
        ).model_dump(mode="json")  # fmt: skip

    def do_server_test(self, params: dict[str, Any]) -> Any:
        config = ServerConfigInfo.model_validate(params["config"])
        ok = config.command != "missing-binary"
        return ServerTestResult(
            ok=ok, state="ready" if ok else "crashed", error=None if ok else "not found",
            tools=("get_current_time",) if ok else (), stderr=(), elapsed_s=0.25,
        ).model_dump(mode="json")  # fmt: skip

    def do_server_import(self, params: dict[str, Any]) -> Any:
        try:
            entries = json.loads(Path(params["path"]).read_text())["mcpServers"]
        except (OSError, ValueError, KeyError) as exc:
            raise Failure(ErrorCode.INVALID_PARAMS, f"cannot read {params['path']}") from exc
        added, skipped = [], []
        for name, entry in entries.items():
            if name in self.servers:
                skipped.append({"message": "already configured", "server": name})
                continue
            config = ServerConfigInfo.model_validate({"name": name, **entry})
            self.servers[name] = server_entry(config, "ready")
            added.append(name)
        return {"added": added, "skipped": skipped}

    def do_server_set_secret(self, params: dict[str, Any]) -> Any:
        if params.get("value"):
            self.secrets.add(params["name"])
        else:
            self.secrets.discard(params["name"])
        return {}

    def do_grant_list(self, _params: dict[str, Any]) -> Any:
        return {"grants": self.grants}

    def do_grant_revoke(self, params: dict[str, Any]) -> Any:
        before = len(self.grants)
        key = (params["thread_id"], params["server"], params["tool"])
        self.grants = [g for g in self.grants if (g["thread_id"], g["server"], g["tool"]) != key]
        if len(self.grants) == before:
            raise Failure(ErrorCode.INVALID_PARAMS, "no such grant")
        return {}


def server_entry(config: ServerConfigInfo, state: str) -> dict[str, Any]:
    return {
        "name": config.name, "state": state if config.enabled else "disabled", "tool_count": 1,
        "trust": config.trust, "enabled": config.enabled, "builtin": False,
        "required": config.required, "transport": "http" if config.url else "stdio",
        "restarts": 0, "config": config.model_dump(mode="json"),
    }  # fmt: skip


def canned_servers() -> dict[str, dict[str, Any]]:
    time_server = ServerConfigInfo(name="time", command="uvx", args=("mcp-server-time",))
    broken = ServerConfigInfo(name="broken", command="missing-binary")
    servers = {
        "workspace": {
            "name": "workspace", "state": "ready", "tool_count": 6, "trust": "trusted",
            "enabled": True, "builtin": True, "required": True, "transport": "inprocess",
            "restarts": 0,
        },
        "time": server_entry(time_server, "ready") | {"pid": 4242},
        "broken": server_entry(broken, "crashed") | {"error": "exited with code 1"},
    }  # fmt: skip
    return servers


def canned_grants() -> list[dict[str, Any]]:
    grants = [
        GrantInfo(thread_id="t1", thread_title="Chapter one", server="time",
                  tool="get_current_time", created_at=1_700_000_000.0),
        GrantInfo(thread_id="t2", thread_title="Notes", server="workspace", tool="write",
                  created_at=1_700_000_600.0),
    ]  # fmt: skip
    return [grant.model_dump(mode="json") for grant in grants]


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
        elif text in SCRIPTS:
            self.fake.coord.script(self, text)
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
        if self.fake.coord.resumes(interrupt):
            self.fake.coord.resume(self, interrupt, value)
            return
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
