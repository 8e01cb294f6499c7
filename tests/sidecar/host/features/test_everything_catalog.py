"""Logging, resources (with subscriptions) and prompts against the real server-everything,
through `HostFeatures`, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import pytest

from sidecar.host.features.client import FeatureRefusedError, FeatureUnavailableError, HostFeatures
from sidecar.host.features.logs import LEVELS
from sidecar.host.host import ServerSpec, ToolHost
from tests.setup.mcp_everything import Everything
from tests.sidecar.host.features.conftest import SERVER, FeatureRig, LogWatch, stdio_params

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DOCUMENT = "demo://resource/static/document/architecture.md"


async def test_simulated_logging_lands_in_the_servers_buffer_after_set_level(
    rig: FeatureRig,
) -> None:
    sent_now = await rig.features.set_log_level(SERVER, "debug")
    watch = LogWatch(rig.features)
    try:
        await rig.call("toggle-simulated-logging", {})
        entry = await watch.wait_for(lambda e: e.source == "server" and "-level" in e.text)
    finally:
        await rig.call("toggle-simulated-logging", {})
        watch.close()

    assert sent_now is True
    assert rig.features.logs.level(SERVER) == "debug"
    assert entry.level in LEVELS
    listed = rig.features.logs.entries(SERVER, min_level=entry.level)
    assert entry in listed
    assert all(LEVELS.index(e.level) >= LEVELS.index(entry.level) for e in listed)


async def test_resources_are_listed_with_their_templates(rig: FeatureRig) -> None:
    resources, templates = await rig.features.resources(None)

    uris = {r["uri"] for r in resources}
    assert DOCUMENT in uris
    assert all(r["server"] == SERVER for r in resources)
    assert "demo://resource/dynamic/text/{resourceId}" in {t["uri_template"] for t in templates}


async def test_a_static_document_is_read_as_markdown_text(rig: FeatureRig) -> None:
    read = await rig.features.read_resource(SERVER, DOCUMENT)

    [part] = read["contents"]
    assert part["uri"] == DOCUMENT
    assert part["mime_type"] == "text/markdown"
    assert part["text"]
    assert part["blob_bytes"] is None


async def test_an_attached_resource_is_its_text_marked_with_where_it_came_from(
    rig: FeatureRig,
) -> None:
    read = await rig.features.read_resource(SERVER, DOCUMENT)
    attached = await rig.features.attach_resource(SERVER, DOCUMENT)

    assert attached["truncated"] is False
    assert attached["text"].startswith(f'<resource server="{SERVER}" uri="{DOCUMENT}">')
    assert read["contents"][0]["text"] in attached["text"]


async def test_an_unknown_resource_is_refused_by_the_server(rig: FeatureRig) -> None:
    with pytest.raises(FeatureRefusedError):
        await rig.features.read_resource(SERVER, "demo://resource/static/document/nope.md")


async def test_a_subscribed_resource_reports_its_updates(rig: FeatureRig) -> None:
    watch = LogWatch(rig.features)
    try:
        await rig.features.subscribe_resource(SERVER, DOCUMENT, subscribe=True)
        await rig.call("toggle-subscriber-updates", {})
        entry = await watch.wait_for(lambda e: e.source == "host" and DOCUMENT in e.text)
    finally:
        await rig.call("toggle-subscriber-updates", {})
        await rig.features.subscribe_resource(SERVER, DOCUMENT, subscribe=False)
        watch.close()

    assert entry.level == "info"


async def test_prompts_are_listed_as_slash_commands_with_their_arguments(rig: FeatureRig) -> None:
    prompts = {p["name"]: p for p in await rig.features.prompts(SERVER)}

    args_prompt = prompts["args-prompt"]
    assert args_prompt["command"] == f"/{SERVER}:args-prompt"
    assert [(a["name"], a["required"]) for a in args_prompt["arguments"]] == [
        ("city", True),
        ("state", False),
    ]


async def test_a_prompt_expands_with_its_arguments(rig: FeatureRig) -> None:
    got = await rig.features.get_prompt(SERVER, "args-prompt", {"city": "Paris"})

    [message] = got["messages"]
    assert message["role"] == "user"
    assert "Paris" in message["text"]
    assert got["text"] == message["text"]


async def test_a_prompt_missing_a_required_argument_is_refused(rig: FeatureRig) -> None:
    with pytest.raises(FeatureRefusedError):
        await rig.features.get_prompt(SERVER, "args-prompt", {})


async def test_a_server_that_is_not_connected_is_unavailable(rig: FeatureRig) -> None:
    with pytest.raises(FeatureUnavailableError):
        await rig.features.read_resource("nowhere", DOCUMENT)


async def test_list_changes_reach_listeners_and_the_servers_log(
    everything: Everything, tmp_path: Path
) -> None:
    features = HostFeatures(tmp_path)
    heard: list[tuple[str, str]] = []
    got = asyncio.Event()

    async def listener(server: str, method: str) -> None:
        heard.append((server, method))
        got.set()

    features.add_listener(listener)
    spec = ServerSpec(SERVER, lambda: stdio_params(everything), transport="stdio")
    host = ToolHost([spec], features=features)
    try:
        await host.wait_ready()
        with anyio.fail_after(20):
            await got.wait()
    finally:
        await host.aclose()

    assert (SERVER, "notifications/tools/list_changed") in heard
    notes = [e for e in features.logs.entries(SERVER) if e.source == "host"]
    assert any("tools" in e.text for e in notes)
