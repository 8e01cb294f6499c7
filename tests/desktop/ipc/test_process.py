"""How the desktop starts the sidecar: `python -m sidecar`, or the bundled app's `--sidecar`."""

from __future__ import annotations

import sys

import pytest

from desktop.ipc.process import sidecar_command


def test_from_source_the_sidecar_runs_as_a_module_of_this_interpreter(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert sidecar_command() == [sys.executable, "-m", "sidecar"]


def test_a_frozen_app_starts_itself_with_the_sidecar_role(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/Applications/Atrium.app/Contents/MacOS/Atrium")
    assert sidecar_command() == ["/Applications/Atrium.app/Contents/MacOS/Atrium", "--sidecar"]


def test_the_choice_can_be_asked_for_explicitly():
    assert sidecar_command("/opt/atrium/atrium", frozen=True) == ["/opt/atrium/atrium", "--sidecar"]
    assert sidecar_command("/usr/bin/python3", frozen=False) == [
        "/usr/bin/python3",
        "-m",
        "sidecar",
    ]
