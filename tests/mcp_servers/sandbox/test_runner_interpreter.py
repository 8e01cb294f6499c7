"""Which interpreter starts the sandbox's child: configured, this one, or a bundle's own."""

from __future__ import annotations

import sys

import pytest

from mcp_servers.sandbox.runner import interpreter


def test_a_configured_interpreter_wins() -> None:
    assert interpreter("/opt/python3.11") == ["/opt/python3.11"]


def test_from_source_the_child_runs_on_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert interpreter(None) == [sys.executable]


def test_a_bundled_app_starts_the_child_through_its_python_role(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert interpreter(None) == [sys.executable, "--python"]
