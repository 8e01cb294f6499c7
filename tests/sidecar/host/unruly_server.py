"""A real MCP server over stdio that misbehaves on purpose, one way per tool.

Written by hand on the raw wire (one JSON-RPC message per line), not with the SDK, so it can send
what the SDK would never let a server send. Run as `python tests/sidecar/host/unruly_server.py`.
It speaks the 2025-11-25 handshake (it refuses `server/discover`, so a client falls back).

Tools:
- `fine()`: a proper text result, `fine`;
- `invalid_reply()`: a result whose text block has no `text` (not a valid `CallToolResult`);
- `wrong_structure()`: structured content that breaks the tool's own output schema;
- `protocol_error()`: a JSON-RPC error (-32603) whose message runs over two lines;
- `crash()`: writes `crashing` to stderr and exits with code 3 before answering;
- `hang()`: writes `hanging` to stderr and never answers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PROTOCOL = "2025-11-25"
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
_COUNT = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
# Read-only, so that a host which trusts the server runs them without asking.
_READ_ONLY = {"readOnlyHint": True}
TOOLS: list[dict[str, Any]] = [
    {"name": name, "description": description, "inputSchema": _NO_ARGS, "annotations": _READ_ONLY}
    for name, description in [
        ("fine", "Answers properly."),
        ("invalid_reply", "Answers out of shape."),
        ("wrong_structure", "Answers against its output schema."),
        ("protocol_error", "Answers with an error."),
        ("crash", "Exits mid-call."),
        ("hang", "Never answers."),
    ]
]
TOOLS[2]["outputSchema"] = _COUNT


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reply(request_id: object, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def refuse(request_id: object, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def call(request_id: object, name: str) -> None:
    if name == "fine":
        reply(request_id, {"content": [{"type": "text", "text": "fine"}]})
    elif name == "invalid_reply":
        reply(request_id, {"content": [{"type": "text"}]})
    elif name == "wrong_structure":
        structured = {"count": "many"}
        text = json.dumps(structured)
        content = [{"type": "text", "text": text}]
        reply(request_id, {"content": content, "structuredContent": structured})
    elif name == "protocol_error":
        refuse(request_id, INTERNAL_ERROR, "the tool broke\nwhile it was thinking")
    elif name == "crash":
        print("crashing", file=sys.stderr, flush=True)
        raise SystemExit(3)
    elif name == "hang":
        print("hanging", file=sys.stderr, flush=True)
    else:
        refuse(request_id, METHOD_NOT_FOUND, f"no tool {name}")


def handle(message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return  # a notification: nothing to answer
    if method == "initialize":
        server_info = {"name": "unruly", "version": "1.0.0"}
        result = {"protocolVersion": PROTOCOL, "capabilities": {"tools": {}}}
        reply(request_id, {**result, "serverInfo": server_info})
    elif method == "ping":
        reply(request_id, {})
    elif method == "tools/list":
        reply(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        call(request_id, str(message.get("params", {}).get("name")))
    else:
        refuse(request_id, METHOD_NOT_FOUND, f"method not found: {method}")


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
