"""A tiny SSE reader so self-tests can check raw event order without any SDK."""

from __future__ import annotations

import json
import urllib.request
from typing import Any


def post_sse(url: str, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """POST JSON and return the stream as (event name, decoded data) pairs."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    events: list[tuple[str | None, Any]] = []
    name: str | None = None
    with urllib.request.urlopen(request, timeout=10) as response:
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
                events.append((name, data if data == "[DONE]" else json.loads(data)))
                name = None
    return events


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def post_json(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)
