"""The real window (offscreen) over a real sidecar whose model is a scripted server: the set-up
the window's end-to-end tests share."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from sidecar.protocol import RunEventParams
from tests.fakes.model_server import ScriptedModelServer


@contextmanager
def window_over_sidecar(
    qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer, *, shown: bool = True
) -> Iterator[DesktopApp]:
    """The desktop with its sidecar started and initialized, on a fresh workspace and data
    folder, talking to `model`; shut down after."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    if shown:
        desktop.window.resize(1000, 700)
        desktop.window.show()
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    try:
        yield desktop
    finally:
        desktop.shutdown()


def completed(params: RunEventParams) -> bool:
    """A run event that ends a turn as completed."""
    event = params.event
    return event.type == "run_finished" and event.outcome == "completed"
