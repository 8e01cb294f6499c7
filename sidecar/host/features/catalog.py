"""Resources and prompts of one connected server, as JSON-shaped dicts for the wire.

The shapes match the `sidecar.protocol.features` models field for field; the handlers validate
them there. MCP refusals (`MCPError`) propagate to the caller.
"""

from __future__ import annotations

import base64
from typing import Any, cast

ATTACH_LIMIT = 200_000
"""Characters of a resource attached to a message (the message limit is 200,000 too)."""


async def list_resources(
    server: str, client: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every resource and template of the server, following pagination."""
    resources: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources.extend(_resource(server, r) for r in page.resources)
        cursor = page.next_cursor
        if cursor is None:
            break
    templates: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await client.list_resource_templates(cursor=cursor)
        templates.extend(_template(server, t) for t in page.resource_templates)
        cursor = page.next_cursor
        if cursor is None:
            break
    return resources, templates


def _resource(server: str, resource: Any) -> dict[str, Any]:
    return {
        "server": server,
        "uri": str(resource.uri),
        "name": resource.name,
        "title": resource.title,
        "description": resource.description,
        "mime_type": resource.mime_type,
        "size": resource.size,
    }


def _template(server: str, template: Any) -> dict[str, Any]:
    return {
        "server": server,
        "uri_template": template.uri_template,
        "name": template.name,
        "title": template.title,
        "description": template.description,
        "mime_type": template.mime_type,
    }


async def read_resource(server: str, client: Any, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    contents: list[dict[str, Any]] = []
    for part in result.contents:
        text = getattr(part, "text", None)
        blob = getattr(part, "blob", None)
        contents.append(
            {
                "uri": str(part.uri),
                "mime_type": part.mime_type,
                "text": text,
                "blob_bytes": _decoded_size(blob) if isinstance(blob, str) else None,
            }
        )
    return {"server": server, "uri": uri, "contents": contents}


def _decoded_size(blob: str) -> int:
    try:
        return len(base64.b64decode(blob, validate=False))
    except ValueError:
        return len(blob) * 3 // 4


def attachment(read: dict[str, Any]) -> dict[str, Any]:
    """A read resource as one block of text for a message, bounded to `ATTACH_LIMIT`."""
    server, uri = read["server"], read["uri"]
    parts: list[str] = []
    for part in cast(list[dict[str, Any]], read["contents"]):
        if part["text"] is not None:
            parts.append(str(part["text"]))
        else:
            mime = part["mime_type"] or "binary"
            parts.append(f"[{mime} content of {part['blob_bytes']} bytes, not included]")
    body = "\n\n".join(parts)
    truncated = len(body) > ATTACH_LIMIT
    if truncated:
        body = body[:ATTACH_LIMIT] + "\n[… truncated]"
    text = f'<resource server="{server}" uri="{uri}">\n{body}\n</resource>'
    return {"server": server, "uri": uri, "text": text, "truncated": truncated}


async def list_prompts(server: str, client: Any) -> list[dict[str, Any]]:
    prompts: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_prompts(cursor=cursor)
        prompts.extend(_prompt(server, p) for p in page.prompts)
        cursor = page.next_cursor
        if cursor is None:
            return prompts


def _prompt(server: str, prompt: Any) -> dict[str, Any]:
    arguments = [
        {"name": a.name, "description": a.description, "required": bool(a.required)}
        for a in prompt.arguments or ()
    ]
    return {
        "server": server,
        "name": prompt.name,
        "title": prompt.title,
        "description": prompt.description,
        "arguments": arguments,
        "command": f"/{server}:{prompt.name}",
    }


async def get_prompt(
    server: str, client: Any, name: str, arguments: dict[str, str]
) -> dict[str, Any]:
    result = await client.get_prompt(name, arguments or None)
    messages: list[dict[str, Any]] = []
    for message in result.messages:
        content = message.content
        text = getattr(content, "text", None)
        if text is None:
            resource = getattr(content, "resource", None)
            text = getattr(resource, "text", None) or f"[{content.type} content]"
        messages.append({"role": message.role, "text": str(text)})
    user_text = "\n\n".join(m["text"] for m in messages if m["role"] == "user")
    return {
        "server": server,
        "name": name,
        "description": result.description,
        "messages": messages,
        "text": user_text,
    }
