"""The fake sidecar's MCP client features: `prompt/list`, `prompt/get`, `resource/list`,
`resource/attach` over its canned servers (imported by `fake_sidecar.py`, which runs as a script).

Only servers in state `ready` are connected (`workspace` and `time`; `broken` is not):

- `workspace` prompts: `summarize` (`path` required, `style` optional) and `outline` (none);
  resources `draft.md` and `notes.txt`, plus a template (never listed as a resource).
- `time` prompt: `convert` (`time` and `zone` required; a zone without a `/` is refused, like a
  server refusing bad arguments); resource `time://zones`.

Errors follow `FeatureErrorCode`: a server that is not connected answers `SERVER_UNAVAILABLE`,
an unknown prompt or URI or a missing required argument answers `SERVER_REFUSED`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sidecar.protocol import (
    FeatureErrorCode,
    PromptArgumentInfo,
    PromptGetResult,
    PromptInfo,
    PromptMessageInfo,
    ResourceAttachResult,
    ResourceInfo,
    ResourceListResult,
    ResourceTemplateInfo,
)

Handler = Callable[[dict[str, Any]], Any]


class Failure(Exception):
    """An error reply with a code (the fake sidecar answers it as a JSON-RPC error)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _prompt(server: str, name: str, description: str, *args: PromptArgumentInfo) -> PromptInfo:
    return PromptInfo(
        server=server, name=name, description=description, arguments=args,
        command=f"/{server}:{name}",
    )  # fmt: skip


PROMPTS: tuple[PromptInfo, ...] = (
    _prompt(
        "workspace",
        "summarize",
        "Summarize a file of the workspace",
        PromptArgumentInfo(name="path", description="File to summarize", required=True),
        PromptArgumentInfo(name="style", description="plain or bullets"),
    ),
    _prompt("workspace", "outline", "Outline the workspace"),
    _prompt(
        "time",
        "convert",
        "Convert a time to another zone",
        PromptArgumentInfo(name="time", description="e.g. 14:30", required=True),
        PromptArgumentInfo(name="zone", description="IANA zone, e.g. Europe/Paris", required=True),
    ),
)

RESOURCES: dict[tuple[str, str], tuple[ResourceInfo, str]] = {
    (r.server, r.uri): (r, text)
    for r, text in (
        (
            ResourceInfo(server="workspace", uri="file:///workspace/draft.md", name="draft.md",
                         mime_type="text/markdown"),
            "# Draft\nIt was a dark night.",
        ),
        (
            ResourceInfo(server="workspace", uri="file:///workspace/notes.txt", name="notes.txt",
                         mime_type="text/plain"),
            "Remember the lighthouse.",
        ),
        (
            ResourceInfo(server="time", uri="time://zones", name="zones",
                         mime_type="application/json"),
            '["Europe/Paris", "Asia/Tokyo"]',
        ),
    )
}  # fmt: skip

TEMPLATES = (
    ResourceTemplateInfo(
        server="workspace", uri_template="file:///workspace/{path}", name="workspace file"
    ),
)


def _expand(prompt: PromptInfo, arguments: dict[str, str]) -> str:
    if prompt.name == "summarize":
        style = arguments.get("style")
        return f"Summarize {arguments['path']}" + (f" as {style}." if style else ".")
    if prompt.name == "convert":
        if "/" not in arguments["zone"]:
            raise Failure(FeatureErrorCode.SERVER_REFUSED, f"unknown zone {arguments['zone']!r}")
        return f"Convert {arguments['time']} to {arguments['zone']}."
    return "Outline the workspace: its folders and what each holds."


class FakeFeatures:
    """Answers the feature methods; `connected()` names the servers that are up right now."""

    def __init__(self, connected: Callable[[], list[str]]) -> None:
        self._connected = connected

    def handler(self, method: str) -> Handler | None:
        handler: Handler | None = getattr(self, "do_" + method.replace("/", "_"), None)
        return handler

    def _require(self, server: str) -> None:
        if server not in self._connected():
            message = f"server {server!r} is not connected"
            raise Failure(FeatureErrorCode.SERVER_UNAVAILABLE, message)

    def do_prompt_list(self, params: dict[str, Any]) -> Any:
        servers = [params["server"]] if params.get("server") else self._connected()
        prompts = [p.model_dump(mode="json") for p in PROMPTS if p.server in servers]
        return {"prompts": prompts}

    def do_prompt_get(self, params: dict[str, Any]) -> Any:
        server, name = params["server"], params["name"]
        self._require(server)
        prompt = next((p for p in PROMPTS if (p.server, p.name) == (server, name)), None)
        if prompt is None:
            raise Failure(FeatureErrorCode.SERVER_REFUSED, f"unknown prompt {name!r}")
        arguments: dict[str, str] = params.get("arguments") or {}
        missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
        if missing:
            raise Failure(FeatureErrorCode.SERVER_REFUSED, f"missing arguments: {missing}")
        text = _expand(prompt, arguments)
        return PromptGetResult(
            server=server, name=name, description=prompt.description,
            messages=(PromptMessageInfo(role="user", text=text),), text=text,
        ).model_dump(mode="json")  # fmt: skip

    def do_resource_list(self, params: dict[str, Any]) -> Any:
        servers = [params["server"]] if params.get("server") else self._connected()
        resources = tuple(r for r, _ in RESOURCES.values() if r.server in servers)
        templates = tuple(t for t in TEMPLATES if t.server in servers)
        return ResourceListResult(resources=resources, templates=templates).model_dump(mode="json")

    def do_resource_attach(self, params: dict[str, Any]) -> Any:
        server, uri = params["server"], params["uri"]
        self._require(server)
        found = RESOURCES.get((server, uri))
        if found is None:
            raise Failure(FeatureErrorCode.SERVER_REFUSED, f"unknown resource {uri}")
        text = f'<resource server="{server}" uri="{uri}">\n{found[1]}\n</resource>'
        return ResourceAttachResult(server=server, uri=uri, text=text).model_dump(mode="json")
