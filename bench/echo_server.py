"""The bare baseline for the ping benchmark: an asyncio JSON-RPC echo over stdin/stdout.

It reads a line, parses it as JSON and writes back a reply with the same id: the least a JSON-RPC
server over a pipe can do, so `sidecar / echo` is the sidecar's own overhead per request.
Run as `python -m bench.echo_server`; it exits on EOF.
"""

from __future__ import annotations

import asyncio
import json
import sys


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    while line := await reader.readline():
        message: dict[str, object] = json.loads(line)
        reply: dict[str, object] = {"jsonrpc": "2.0", "id": message.get("id"), "result": {}}
        writer.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        await writer.drain()


if __name__ == "__main__":
    asyncio.run(serve())
