"""Test-wide fixtures: anyio on asyncio, Qt offscreen, an isolated data dir per test."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# LiteLLM would otherwise fetch its model map from the network at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from sidecar.keychain import KEYCHAIN
from tests.fakes.fixtures import (  # after the environment is set
    agent_clis,
    scripted_anthropic,
    scripted_chat,
    scripted_responses,
)
from tests.peers import SKIP_PREFIX

__all__ = ["agent_clis", "scripted_anthropic", "scripted_chat", "scripted_responses"]


@pytest.fixture(autouse=True)
def _qt_garbage_is_never_collected(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used Qt, move everything it left to the collector's permanent
    generation (`gc.freeze`), so its windows are never freed by the cyclic garbage collector.

    Why: windows and dialogs hold their controllers in reference cycles (signals connected to
    bound methods and lambdas), so a closed window's wrappers wait for the cyclic collector.
    A collection at some later moment (in another test, in the middle of pydantic work) freed
    such a cycle in an order that crashed the test process now and then ("Segmentation fault
    ... Garbage-collecting", seen in full runs and in window-test runs alike). Deleting them
    explicitly is no cure: a window deleted while its controllers still hold it crashes inside
    Qt's own child deletion. The window itself never has this problem: it lives until the app
    exits and its start-up heap is frozen the same way (`desktop.app.freeze_start_up`). Tests
    that never touch Qt collect as usual; during a Qt test the collector does not run at all.
    """
    uses_qt = bool({"qapp", "qtbot"} & set(request.fixturenames))
    if uses_qt:
        gc.disable()  # nor in the middle of the test itself
    try:
        yield
    finally:
        if uses_qt:
            gc.freeze()
            gc.enable()


@pytest.fixture(autouse=True)
def _fresh_keychain() -> None:
    """Each test reads the keyring backend it installs, not a value cached by an earlier test."""
    KEYCHAIN.invalidate()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ATRIUM_DATA_DIR for the test, so nothing touches the author's real data."""
    path = tmp_path / "data"
    path.mkdir()
    monkeypatch.setenv("ATRIUM_DATA_DIR", str(path))
    yield path


@pytest.fixture(autouse=True)
def _window_settings_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The window's QSettings (geometry, appearance) go to a fresh folder per test, never to
    the author's config (only when the test session uses Qt at all)."""
    qtcore = sys.modules.get("PySide6.QtCore")
    if qtcore is None:
        return
    settings = qtcore.QSettings
    folder = str(tmp_path_factory.mktemp("qsettings"))
    for fmt in (settings.Format.IniFormat, settings.Format.NativeFormat):
        settings.setPath(fmt, settings.Scope.UserScope, folder)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly which tests were skipped for a missing peer (an npm package, or a system
    program such as Xvfb; see tests/peers.py), each with its own reason."""
    peers = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if SKIP_PREFIX in str(getattr(report, "longrepr", ""))
    ]
    if peers:
        terminalreporter.write_sep("!", f"{len(peers)} tests skipped: peers unavailable")
        for report in peers:
            longrepr = getattr(report, "longrepr", "")
            message = str(longrepr[2] if isinstance(longrepr, tuple) else longrepr)
            reason = message.split("instead): ", 1)[-1]
            terminalreporter.write_line(f"{report.nodeid}: {reason}", yellow=True)
        terminalreporter.write_line(
            "Install what each names (Node.js/npm with registry access for npm peers, the "
            "README's system packages for the window); CI sets ATRIUM_REQUIRE_PEERS=1, which "
            "fails them instead.",
            yellow=True,
        )
