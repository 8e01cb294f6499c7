"""The Profiles tab says which strong-agent CLIs were found (`agents/providers`): version and
path, or what is missing and how to install it; a refused request is shown in its place."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.views.profiles_tab import ProfilesTabWidget, describe_agents
from sidecar.protocol import AgentProviderInfo, AgentProvidersResult, AgentsEmpty, ErrorObject
from tests.desktop.support import FakeSender

REPORT = AgentProvidersResult(
    providers=(
        AgentProviderInfo(
            provider="claude", installed=False, error="claude not found on PATH", hint="npm i"
        ),
        AgentProviderInfo(
            provider="codex",
            installed=True,
            executable="/bin/codex",
            error="`/bin/codex --version` exited with 1: node:sqlite is unavailable",
        ),
        AgentProviderInfo(
            provider="openclaw",
            installed=True,
            executable="/peers/bin/openclaw",
            source="env",
            version="2026.9.6",
        ),
    )
)


def test_each_cli_reads_as_found_with_its_version_or_what_is_missing() -> None:
    assert describe_agents(REPORT).splitlines() == [
        "Claude Code: claude not found on PATH. npm i",
        "Codex: `/bin/codex --version` exited with 1: node:sqlite is unavailable",
        "OpenClaw 2026.9.6: /peers/bin/openclaw",
    ]
    assert describe_agents(AgentProvidersResult(error="no agents server")) == (
        "Strong-agent CLIs could not be checked: no agents server"
    )


def test_refresh_asks_the_sidecar_and_shows_the_answer(
    qtbot: QtBot, fake_sender: FakeSender
) -> None:
    tab = ProfilesTabWidget(CoordController(fake_sender.api))
    qtbot.addWidget(tab)
    tab.show()
    tab.refresh()

    params, pending = fake_sender.last("agents/providers")
    assert isinstance(params, AgentsEmpty)
    pending.resolve(REPORT)

    assert tab.agents_label.isVisible()
    assert "OpenClaw 2026.9.6" in tab.agents_label.text()


def test_a_refused_request_is_shown_in_place(qtbot: QtBot, fake_sender: FakeSender) -> None:
    tab = ProfilesTabWidget(CoordController(fake_sender.api))
    qtbot.addWidget(tab)
    tab.show()
    tab.refresh()

    fake_sender.last("agents/providers")[1].reject(ErrorObject(code=-32603, message="boom"))

    assert tab.agents_label.text() == "Strong-agent CLIs could not be checked: boom"
